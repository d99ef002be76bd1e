from collections.abc import Callable
from typing import Any


class Layer:
    forward: Callable[..., Any]  # defined by each subclass, as with paddle's own Layer

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)
