"""Explicit SIMD vectors for Numba kernels: a Numba type whose value is an LLVM vector, and the few
operations the lane-parallel DP kernels need.

Auto-vectorised lane loops keep their state in arrays, so every cell costs loads and stores. With these
vectors a kernel holds many DP rows' state in registers across a whole column sweep. A vector is
:data:`VECTOR_BYTES` wide (64 where the CPU has AVX-512BW, else 32); LLVM splits wider vectors on CPUs without
such registers, so results never depend on the host, only speed does. ``SEQCOMPARE_VECTOR_BYTES`` (16, 32 or
64) overrides the width, for tests.

Loads and stores are unchecked: callers keep ``start + lanes`` within the array.
"""

from __future__ import annotations

import os

import llvmlite.binding as llvm_binding
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, models, register_model


NATIVE_VECTOR_BYTES = 64 if llvm_binding.get_host_cpu_features().get("avx512bw", False) else 32


def _vector_bytes() -> int:
    forced = os.environ.get("SEQCOMPARE_VECTOR_BYTES", "")
    if forced:  # tests run the narrower width too; seqcompare._jit then keeps compiled code out of the cache
        if forced not in ("16", "32", "64"):
            raise ValueError(f"SEQCOMPARE_VECTOR_BYTES must be 16, 32 or 64, not {forced!r}")
        return int(forced)
    return NATIVE_VECTOR_BYTES


VECTOR_BYTES = _vector_bytes()


class Vector(types.Type):
    """``lanes`` values of the integer type ``dtype`` in one LLVM vector."""

    def __init__(self, dtype, lanes: int):
        self.dtype = dtype
        self.lanes = lanes
        super().__init__(name=f"Vector({dtype}, {lanes})")


@register_model(Vector)
class _VectorModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        element = dmm.lookup(fe_type.dtype).get_value_type()
        super().__init__(dmm, fe_type, ir.VectorType(element, fe_type.lanes))


def lanes_of(dtype) -> int:
    """Lanes of ``dtype`` (a NumPy or Numba integer type) in one vector."""
    bits = getattr(dtype, "bitwidth", None) or dtype.itemsize * 8
    return VECTOR_BYTES * 8 // bits


def _vector_for(dtype) -> Vector:
    return Vector(dtype, VECTOR_BYTES * 8 // dtype.bitwidth)


def _element_pointer(context, builder, array_type, array, start):
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(data, [start])


def _is_flat_int_array(value) -> bool:
    return isinstance(value, types.Array) and value.ndim == 1 and isinstance(value.dtype, types.Integer)


@intrinsic
def load(typingctx, array, start):
    """The vector ``array[start : start + lanes]`` (a 1-D integer array)."""
    if not (_is_flat_int_array(array) and isinstance(start, types.Integer)):
        return None
    vector = _vector_for(array.dtype)

    def codegen(context, builder, sig, args):
        pointer = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        vector_pointer = builder.bitcast(pointer, context.get_value_type(vector).as_pointer())
        return builder.load(vector_pointer, align=array.dtype.bitwidth // 8)

    return vector(array, start), codegen


@intrinsic
def store(typingctx, array, start, value):
    """``array[start : start + lanes] = value``."""
    if not (_is_flat_int_array(array) and isinstance(value, Vector) and value.dtype == array.dtype):
        return None

    def codegen(context, builder, sig, args):
        pointer = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        vector_pointer = builder.bitcast(pointer, context.get_value_type(value).as_pointer())
        builder.store(args[2], vector_pointer, align=array.dtype.bitwidth // 8)
        return context.get_dummy_value()

    return types.none(array, start, value), codegen


@intrinsic
def store_bytes(typingctx, array, start, value):
    """``array[start : start + lanes] = value``, each lane cut to its low byte (``array`` of uint8 or int8)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype in (types.uint8, types.int8)
            and isinstance(value, Vector)):  # fmt: skip
        return None

    def codegen(context, builder, sig, args):
        pointer = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        narrow = ir.VectorType(ir.IntType(8), value.lanes)
        vector_pointer = builder.bitcast(pointer, narrow.as_pointer())
        builder.store(builder.trunc(args[2], narrow), vector_pointer, align=1)
        return context.get_dummy_value()

    return types.none(array, start, value), codegen


@intrinsic
def splat(typingctx, scalar):
    """A vector with ``scalar`` (an integer of the lanes' type) in every lane."""
    if not isinstance(scalar, types.Integer):
        return None
    vector = _vector_for(scalar)

    def codegen(context, builder, sig, args):
        vector_type = context.get_value_type(vector)
        single = builder.insert_element(ir.Constant(vector_type, ir.Undefined), args[0], ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), vector.lanes), [0] * vector.lanes)
        return builder.shuffle_vector(single, ir.Constant(vector_type, ir.Undefined), mask)

    return vector(scalar), codegen


def _binary(name, build):
    @intrinsic
    def operation(typingctx, a, b):
        if not (isinstance(a, Vector) and a == b):
            return None

        def codegen(context, builder, sig, args):
            return build(builder, *args)

        return a(a, b), codegen

    operation.__name__ = name
    return operation


add = _binary("add", lambda builder, x, y: builder.add(x, y))
subtract = _binary("subtract", lambda builder, x, y: builder.sub(x, y))
minimum = _binary("minimum", lambda builder, x, y: builder.select(builder.icmp_signed("<", x, y), x, y))
maximum = _binary("maximum", lambda builder, x, y: builder.select(builder.icmp_signed(">", x, y), x, y))


@intrinsic
def where_greater(typingctx, a, b, if_greater, otherwise):
    """Lane by lane, ``if_greater`` where ``a > b``, else ``otherwise``."""
    if not (isinstance(a, Vector) and a == b and isinstance(if_greater, Vector) and if_greater == otherwise
            and a.lanes == if_greater.lanes):  # fmt: skip
        return None

    def codegen(context, builder, sig, args):
        return builder.select(builder.icmp_signed(">", args[0], args[1]), args[2], args[3])

    return if_greater(a, b, if_greater, otherwise), codegen


@intrinsic
def where_equal(typingctx, a, b, if_equal, otherwise):
    """Lane by lane, ``if_equal`` where ``a == b``, else ``otherwise``."""
    if not (isinstance(a, Vector) and a == b and isinstance(if_equal, Vector) and if_equal == otherwise
            and a.lanes == if_equal.lanes):  # fmt: skip
        return None

    def codegen(context, builder, sig, args):
        return builder.select(builder.icmp_signed("==", args[0], args[1]), args[2], args[3])

    return if_equal(a, b, if_equal, otherwise), codegen


@intrinsic
def any_greater(typingctx, a, b):
    """Whether ``a > b`` in any lane (one compare and a mask test: a branch a kernel takes rarely)."""
    if not (isinstance(a, Vector) and a == b):
        return None

    def codegen(context, builder, sig, args):
        greater = builder.icmp_signed(">", args[0], args[1])
        mask = builder.bitcast(greater, ir.IntType(a.lanes))
        return builder.icmp_unsigned("!=", mask, ir.Constant(ir.IntType(a.lanes), 0))

    return types.boolean(a, b), codegen


@intrinsic
def constant(typingctx, like, value):
    """A vector of ``like``'s type with ``value`` (an integer literal) in every lane: a constant LLVM sees, which
    an instruction reads from memory where it needs it, where a splat of a loaded value would hold a register."""
    if not (isinstance(like, Vector) and isinstance(value, types.IntegerLiteral)):
        return None
    number = value.literal_value

    def codegen(context, builder, sig, args):
        element = context.get_value_type(like.dtype)
        return ir.Constant(ir.VectorType(element, like.lanes), [ir.Constant(element, number)] * like.lanes)

    return like(like, value), codegen


@intrinsic
def splat_as(typingctx, like, scalar):
    """A vector of ``like``'s dtype (a 1-D integer array) with ``scalar`` (any integer, cast to that dtype) in
    every lane: one kernel body serves lanes of several widths."""
    if not (_is_flat_int_array(like) and isinstance(scalar, types.Integer)):
        return None
    vector = _vector_for(like.dtype)

    def codegen(context, builder, sig, args):
        value = context.cast(builder, args[1], sig.args[1], like.dtype)
        vector_type = context.get_value_type(vector)
        single = builder.insert_element(ir.Constant(vector_type, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), vector.lanes), [0] * vector.lanes)
        return builder.shuffle_vector(single, ir.Constant(vector_type, ir.Undefined), mask)

    return vector(like, scalar), codegen


@intrinsic
def lanes_in(typingctx, like):
    """The lanes of one vector of ``like``'s dtype (a 1-D integer array), as a constant the compiler sees."""
    if not _is_flat_int_array(like):
        return None
    lanes = VECTOR_BYTES * 8 // like.dtype.bitwidth

    def codegen(context, builder, sig, args):
        return ir.Constant(context.get_value_type(types.intp), lanes)

    return types.intp(like), codegen
