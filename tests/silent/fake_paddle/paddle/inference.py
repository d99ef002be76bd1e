class Config:
    def __init__(self, *args: str) -> None:
        self.args = args

    def set_model(self, *args: str) -> None:
        self.args = args
