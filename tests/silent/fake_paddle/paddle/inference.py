class Config:
    def __init__(self, *args):
        self.args = args

    def set_model(self, *args):
        self.args = args
