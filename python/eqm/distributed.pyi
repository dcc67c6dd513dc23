import os
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

def sweep(model_text: str, points: Union[Sequence[Mapping[str, float]], Mapping[str, Sequence[float]]],
          client: Any, model: Optional[str] = ..., chunks: Optional[int] = ..., threads: Optional[int] = ...,
          parquet: Optional[str] = ..., libraries: Sequence[Union[str, os.PathLike]] = ...,
          **settings: Any) -> Any: ...
