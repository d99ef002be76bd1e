from collections.abc import Iterable, Iterator
from typing import Any


class DataLoader:
    def __init__(self, data: Iterable[Any]) -> None:
        self.data = list(data)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)
