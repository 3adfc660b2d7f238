"""Arrow chunks as columns: dense numpy where every row has one shape, lists otherwise.

pyarrow's own ``to_numpy`` imports pandas (a second of startup), so numeric data is read from the
buffers directly.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from olive_eval.data.batch import Column, Columns

#: Arrow primitive types read straight from their data buffer.
_NUMPY_OF_ARROW = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "halffloat": np.float16, "float": np.float32, "double": np.float64,
}  # fmt: skip


def table_columns(table: pa.Table, names: list[str] | None = None) -> Columns:
    return {name: column(table.column(name).combine_chunks()) for name in (names or table.column_names)}


def column(array: pa.Array) -> Column:
    """A column: dense when its rows share a shape and are numeric, a list of per-row values otherwise."""
    kind = array.type
    if pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind) or pa.types.is_large_list(kind):
        dense = _dense_list(array)
        if dense is not None:
            return dense
        inner = column(array.flatten())
        offsets = _flat(array.offsets) - array.offsets[0].as_py() if not pa.types.is_fixed_size_list(kind) else None
        if offsets is None:
            step = kind.list_size
            offsets = np.arange(0, len(array) * step + 1, step)
        return [inner[offsets[i] : offsets[i + 1]] for i in range(len(array))]
    if str(kind) in _NUMPY_OF_ARROW or (str(kind) == "bool" and not array.null_count):
        return _flat(array)
    return array.to_pylist()


def _dense_list(array: pa.Array) -> np.ndarray | None:
    kind = array.type
    if array.null_count:
        return None
    if pa.types.is_fixed_size_list(kind):
        inner = _dense_or_none(array.flatten())
        return None if inner is None else inner.reshape(len(array), kind.list_size, *inner.shape[1:])
    lengths = np.diff(_flat(array.offsets))
    if len(lengths) and not np.all(lengths == lengths[0]):
        return None
    inner = _dense_or_none(array.flatten())
    if inner is None:
        return None
    return inner.reshape(len(array), int(lengths[0]) if len(lengths) else 0, *inner.shape[1:])


def _dense_or_none(array: pa.Array) -> np.ndarray | None:
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type) or pa.types.is_fixed_size_list(array.type):
        return _dense_list(array)
    if str(array.type) in _NUMPY_OF_ARROW or str(array.type) == "bool":
        return _flat(array)
    return None


def _valid(array: pa.Array) -> np.ndarray:
    bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)].astype(bool)


def _flat(array: pa.Array) -> np.ndarray:
    """A flat numeric or boolean Arrow array as numpy, from its buffers (numeric nulls become NaN)."""
    name = str(array.type)
    if name in _NUMPY_OF_ARROW:
        dtype = np.dtype(_NUMPY_OF_ARROW[name])
        values = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)
        if array.null_count:
            values = values.astype(np.float64)
            values[~_valid(array)] = np.nan
        return values
    if name == "bool":
        bits = np.frombuffer(array.buffers()[1], dtype=np.uint8)
        values = np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)].astype(bool)
        return values
    return np.array(array.to_pylist())
