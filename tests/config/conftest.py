from tests.config.fixtures import compact_repo, ocr_repo

__all__ = ["compact_repo", "ocr_repo"]
