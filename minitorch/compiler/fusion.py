"""Fusion: a run of elementwise ops replayed as one allocation-free pass of ufunc calls into reused buffers.

How a group is found: each op's own ``forward`` is run once more at compile time on ``Symbolic`` stand-ins
for its input arrays. A stand-in records every ufunc the op calls (numpy sends ufunc calls on foreign objects
to ``__array_ufunc__``; CuPy's ufuncs do the same) and computes it on the traced values; anything else
(a reduction, ``where``, a converting ``astype``, a reshape) ends the recording and the op is not fused. A
recorded op whose result is bit-identical to the traced one joins the current group; consecutive such ops form
one group (a single op of several ufunc calls, the tanh GELU, is a group too).

How a group runs: its ufunc calls, in order, each writing into a buffer (``out=``): values used only inside
the group live in scratch buffers kept by the group (a value takes over the buffer of an operand that dies
at the same call), values used after the group (by later ops, by backward, or returned) are written into
buffers from a small pool that are reused once nothing else holds them (their reference count shows it).
The kernels are the ops' own ufuncs, so values are bit-identical to eager mode; the gain is the allocations,
page faults and per-op dispatch a chain of temporaries costs (benchmarks/NOTES.md measures it). The backward of a
group is recorded the same way (``FusedBackward``), with a variant for a gradient of exactly 1, values only it
reads kept in reusable frames (``FusedGroup.use_frame``), and the parts that read only forward values batched
across a chain's rounds (``_static_chains``, ``_batched``).

Why not numexpr or numba: measured on this project's CPU at one thread, numexpr took 62 ms and numba's
``math.tanh`` loop 218 ms for a 4M-element float32 tanh that numpy's SIMD ufunc does in 1.4 ms; for
``x * y + x`` numexpr took 3.2 ms against numpy's 1.7 ms. Both would also change results in the last bit.
"""

from __future__ import annotations

import sys

from ..autograd import grad_mode
from ..tensor import Tensor
from . import backward
from .replay_nodes import fused_node


class NotFusable(Exception):
    """The op did something other than ufunc calls on its array inputs."""


class Program:
    """Ufunc calls recorded on stand-ins: registers (inputs, constants, results) and instructions."""

    def __init__(self):
        self.values: list = []  # the traced value of each register
        self.kinds: list = []  # "input", "const" or "result"
        self.instructions: list = []  # (ufunc, (operand registers), result register)

    def register(self, value, kind: str) -> int:
        self.values.append(value)
        self.kinds.append(kind)
        return len(self.values) - 1

    def call(self, ufunc, inputs):
        operands = []
        for x in inputs:
            if isinstance(x, Symbolic):
                operands.append(x.reg)
            elif type(x) in (int, float, bool, complex) or hasattr(x, "dtype"):
                operands.append(self.register(x, "const"))
            else:
                raise NotFusable(f"operand {type(x).__name__}")
        result = ufunc(*[self.values[r] for r in operands])
        if not hasattr(result, "dtype") or not hasattr(result, "shape"):
            raise NotFusable("a non-array result")
        reg = self.register(result, "result")
        self.instructions.append((ufunc, tuple(operands), reg))
        return Symbolic(result, reg, self)


class Symbolic:
    """An array's stand-in while an op's forward is recorded (see the module docstring)."""

    __slots__ = ("value", "reg", "program")
    __array_priority__ = 1000

    def __init__(self, value, reg: int, program: Program):
        self.value, self.reg, self.program = value, reg, program

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def shape(self):
        return self.value.shape

    @property
    def ndim(self):
        return self.value.ndim

    @property
    def size(self):
        return self.value.size

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs or ufunc.nout != 1:
            raise NotFusable(f"{ufunc.__name__}.{method}")
        return self.program.call(ufunc, inputs)

    def __array_function__(self, func, types, args, kwargs):
        raise NotFusable(getattr(func, "__name__", "a function"))

    def __array__(self, *args, **kwargs):
        raise NotFusable("conversion to an array")

    def __bool__(self):
        raise NotFusable("bool() of an array")

    def _ufunc(name, reflected=False):  # noqa: N805 - builds the operator methods below
        def method(self, other):
            xp = _xp_of(self.value)
            ufunc = getattr(xp, name)
            return ufunc(other, self) if reflected else ufunc(self, other)

        return method

    __add__, __radd__ = _ufunc("add"), _ufunc("add", True)
    __sub__, __rsub__ = _ufunc("subtract"), _ufunc("subtract", True)
    __mul__, __rmul__ = _ufunc("multiply"), _ufunc("multiply", True)
    __truediv__, __rtruediv__ = _ufunc("true_divide"), _ufunc("true_divide", True)
    __pow__, __rpow__ = _ufunc("power"), _ufunc("power", True)
    __gt__, __lt__ = _ufunc("greater"), _ufunc("less")
    __ge__, __le__ = _ufunc("greater_equal"), _ufunc("less_equal")
    del _ufunc

    def __neg__(self):
        return _xp_of(self.value).negative(self)

    def astype(self, dtype, copy=True):
        """``astype`` to the array's own dtype without a copy (an op's ``.astype(x.dtype, copy=False)``) is the
        array itself; anything else is not a ufunc call."""
        if copy or _xp_of(self.value).dtype(dtype) != self.value.dtype:
            raise NotFusable("astype")
        return self

    # Tensor methods whose kernel on a floating array is exactly this ufunc (ops/pointwise.py's table), for
    # derivatives written in Tensor ops (the tanh GELU's): recorded the same way
    def tanh(self):
        return _xp_of(self.value).tanh(self)

    def exp(self):
        return _xp_of(self.value).exp(self)


def _xp_of(array):
    module = type(array).__module__.split(".")[0]
    return sys.modules[module] if module in ("numpy", "cupy") else sys.modules["numpy"]


class BufferPool:
    """Buffers of one shape and dtype for values that leave a group: one is reused when only the pool holds it."""

    __slots__ = ("xp", "shape", "dtype", "buffers")

    def __init__(self, xp, shape, dtype):
        self.xp, self.shape, self.dtype, self.buffers = xp, shape, dtype, []

    def take(self):
        for buffer in self.buffers:
            if sys.getrefcount(buffer) == 3:  # the list, this loop's name, getrefcount's argument
                return buffer
        buffer = self.xp.empty(self.shape, self.dtype)
        if len(self.buffers) < 3:
            self.buffers.append(buffer)
        return buffer


SMALL = 4096  # outputs of fewer elements are allocated fresh at each call, not taken from a pool
# Bytes per array in one block of a blocked kernel (1 MiB: 256K float32 elements). Measured on this project's
# CPU (benchmarks/NOTES.md, fourth round): a 4M-element backward of 5 ufunc calls took 6.8 ms in 64 KiB blocks,
# 4.8 ms in 256 KiB and 3.9 ms in 1 MiB blocks (the blocks stay in L2/L3; smaller ones pay a ufunc call's setup
# and the prefetcher's start-up per block), 4.3 ms unblocked into buffers.
BLOCK_BYTES = 1 << 20
BLOCKED_FROM = 2  # arrays of fewer than this many blocks run whole


def _size(shape) -> int:
    size = 1
    for n in shape:
        size *= n
    return size


def _block_of(program) -> int:
    """Elements per block for the program's widest dtype (``BLOCK_BYTES`` per array)."""
    itemsize = max((v.dtype.itemsize for v in program.values if hasattr(v, "dtype")), default=4)
    return max(BLOCK_BYTES // itemsize, 1)


def _blockable_size(program) -> int | None:
    """The element count every array register of the program has, when all have one shape (no broadcasting
    between registers; numbers and 0-d constants aside) and it is large enough to block; else None."""
    shapes = {value.shape for value, kind in zip(program.values, program.kinds)
              if getattr(value, "ndim", 0) and not (kind == "const" and value.ndim == 0)}
    if len(shapes) != 1 or any(kind == "const" and getattr(value, "ndim", 0)
                               for value, kind in zip(program.values, program.kinds)):
        return None
    shape = shapes.pop()
    size = 1
    for n in shape:
        size *= n
    return size if size >= BLOCKED_FROM * _block_of(program) else None


class FusedKernel:
    """A recorded program made runnable: constants in place, scratch buffers for values that die inside it,
    pools for the ``escaping`` registers (values that outlive it), ``inputs`` filled at each run."""

    def __init__(self, program: Program, inputs: list, escaping: list, backend):
        xp = backend.xp
        self.inputs = inputs  # registers filled by the caller
        self.outputs = [(reg, BufferPool(xp, program.values[reg].shape, program.values[reg].dtype))
                        for reg in escaping if program.kinds[reg] == "result"]
        self.regs = [None] * len(program.values)
        self.fixed_regs = [reg for reg, kind in enumerate(program.kinds) if kind == "fixed" and
                           getattr(program.values[reg], "base", None) is None]  # (their own memory)
        for reg, kind in enumerate(program.kinds):
            if kind in ("const", "fixed"):  # (fixed: a buffer bound at build that calls write: batches below)
                self.regs[reg] = program.values[reg]
        for reg, array in _strong_constants(program, xp).items():
            self.regs[reg] = array
        self.size = _blockable_size(program)  # run block by block (see ``_execute_blocked``), or None
        self.block = _block_of(program)
        self.scratch_bytes = self._allocate_scratch(program, set(escaping), xp)
        self.instructions = [(f, ops[0], ops[1] if len(ops) > 1 else -1, out) for f, ops, out in program.instructions]
        self.quiet = backend.quiet_fp_state
        written = {out for _, _, out in program.instructions}
        self.scratch_regs = [reg for reg, kind in enumerate(program.kinds) if kind == "result" and reg in written
                             and reg not in set(escaping) and reg not in dict(self.aliases)]
        self.full_regs = [reg for reg in inputs] + [reg for reg, _ in self.outputs] + [reg for reg, _ in self.aliases]
        self.straight = None  # the generated program (``_straight_line``), for kernels that do not run blocked

    def _allocate_scratch(self, program, escaping: set, xp) -> int:
        """Buffers for the registers used only inside the kernel. A value lives from the call that writes it to
        the last call that reads it; two values share a buffer when their lives do not overlap (a value read for
        the last time by the call that writes the next one is fine: elementwise ufuncs may write in place). A
        value first tries the buffer of an escaping register that is written later (so a chain ``mul, add, tanh``
        runs entirely in its output's buffer), then a scratch buffer; returns the scratch bytes."""
        define, last_use = {}, {}
        for n, (_, operands, out) in enumerate(program.instructions):
            for r in operands:
                last_use[r] = n
            define[out] = n
        values = program.values

        def fits(life, lives) -> bool:
            return all(life[1] <= other[0] or other[1] <= life[0] for other in lives)

        escaping_lives = {reg: [(define[reg], float("inf"))] for reg in escaping if reg in define}
        scratch: list = []  # (buffer, lives)
        self.aliases = []  # (register, escaping register whose buffer it borrows)
        total = 0
        for _, _, out in program.instructions:
            if out in escaping or program.kinds[out] == "fixed":
                continue
            value, life = values[out], (define[out], last_use.get(out, define[out]))
            for reg, lives in escaping_lives.items():
                if values[reg].shape == value.shape and values[reg].dtype == value.dtype and fits(life, lives):
                    lives.append(life)
                    self.aliases.append((out, reg))
                    break
            else:
                for buffer, lives in scratch:
                    if buffer.dtype == value.dtype and (self.size or buffer.shape == value.shape) and fits(life, lives):
                        lives.append(life)
                        break
                else:  # blocked kernels need a block's worth of scratch, not an array's
                    buffer = xp.empty((self.block,) if self.size else value.shape, value.dtype)
                    total += buffer.nbytes
                    scratch.append((buffer, [life]))
                self.regs[out] = buffer
        return total

    def execute(self) -> list:
        """Run the instructions (inputs already in ``regs``); returns the registers list (caller reads, then
        calls ``clear``)."""
        regs = self.regs
        for reg, pool in self.outputs:
            regs[reg] = pool.take()
        for reg, owner in self.aliases:
            regs[reg] = regs[owner]
        state = self.quiet
        token = state[0].set(state[1]) if state is not None else None
        try:
            if self.size:
                self._execute_blocked(regs)
            else:
                for f, a, b, out in self.instructions:
                    if b < 0:
                        f(regs[a], regs[out])
                    else:
                        f(regs[a], regs[b], regs[out])
        finally:
            if token is not None:
                state[0].reset(token)
        return regs

    def _execute_blocked(self, regs) -> None:
        """The program run on consecutive blocks of ``block`` elements: every array register is a slice of the
        flattened array (inputs, pooled outputs) or a block-sized scratch buffer, so a group's values stay in
        the CPU's cache between its calls: one pass over memory for the whole chain instead of one per op, with
        the same ufuncs on the same elements (bit-identical)."""
        n = self.size
        flat = []
        for reg in self.full_regs:
            array = regs[reg]
            if getattr(array, "ndim", 0):  # numpy scalars and 0-d arrays broadcast as they are
                flat.append((reg, (array if array.flags.c_contiguous else array.copy()).reshape(-1)))
        scratch = [(reg, regs[reg]) for reg in self.scratch_regs]
        block_regs = list(regs)
        instructions = self.instructions
        block = self.block
        for start in range(0, n, block):
            stop = min(start + block, n)
            for reg, array in flat:
                block_regs[reg] = array[start:stop]
            if stop - start != block:
                for reg, buffer in scratch:
                    block_regs[reg] = buffer[: stop - start]
            for f, a, b, out in instructions:
                if b < 0:
                    f(block_regs[a], out=block_regs[out])
                else:
                    f(block_regs[a], block_regs[b], out=block_regs[out])

    def clear(self) -> None:
        regs = self.regs
        for reg, _ in self.outputs:
            regs[reg] = None
        for reg, _ in self.aliases:  # (a pooled buffer is reused only once nothing else refers to it)
            regs[reg] = None
        for reg in self.inputs:
            regs[reg] = None


def _strong_constants(program, xp) -> dict:
    """0-d arrays for the program's number constants that a ufunc would convert to its arrays' dtype anyway: a
    Python ``1`` in ``1 - t * t`` (or a numpy scalar of the arrays' dtype) read by calls whose array operands and
    result all have one floating dtype, and exactly representable in it. numpy converts a Python number for each
    call (NEP 50's weak scalars: ~0.6 us against ~0.26 us for a 0-d array on tiny arrays, measured); a 0-d array
    of that dtype selects the same loop with the same value, so the results are the same bits."""
    dtypes: dict = {}
    for _, operands, out in program.instructions:
        dtype = program.values[out].dtype
        arrays = [program.values[r] for r in operands if program.kinds[r] != "const"]
        uniform = dtype.kind == "f" and all(getattr(a, "dtype", None) == dtype for a in arrays)
        for r in operands:
            if program.kinds[r] == "const":
                dtypes.setdefault(r, set()).add(dtype if uniform else None)
    strong = {}
    for reg, seen in dtypes.items():
        value = program.values[reg]
        if len(seen) != 1 or None in seen:
            continue
        dtype = seen.pop()
        if type(value) in (int, float, bool):
            try:
                exact = float(dtype.type(value)) == value
            except (OverflowError, ValueError):
                exact = False
            if exact:
                strong[reg] = xp.asarray(value, dtype=dtype)
        elif getattr(value, "dtype", None) == dtype and getattr(value, "ndim", None) == 0:
            strong[reg] = xp.asarray(value)
    return strong


def _load_lines(loads: list, sizes: dict) -> list:
    """``r<n> = <expression>`` for each load; loads from ``name[i]`` of a list in ``sizes`` (its length) become
    one unpacking assignment (one bytecode for the whole list instead of an indexing per register)."""
    lines, by_list, other = [], {}, []
    for reg, expression in loads:
        name, _, rest = expression.partition("[")
        if name in sizes and rest[:-1].isdigit():
            by_list.setdefault(name, []).append((int(rest[:-1]), reg))
        else:
            other.append((reg, expression))
    for name, entries in by_list.items():
        targets: list = ["_"] * sizes[name]
        copies = []
        for index, reg in entries:
            if targets[index] == "_":
                targets[index] = f"r{reg}"
            else:
                copies.append(f"    r{reg} = {targets[index]}")
        lines.append(f"    {', '.join(targets)}, = {name}")
        lines += copies
    return lines + [f"    r{reg} = {expression}" for reg, expression in other]


def _straight_line(kernel, params: str, loads: list, tail: list, skip=frozenset(), sizes=None):
    """The kernel's instructions as a generated Python function ``program(<params>)``: it loads the per-call
    registers (``loads``: (register, expression)), takes its pooled output buffers (but those in ``skip``, which
    ``loads`` gives), then makes one line per ufunc
    call with ``out`` passed by position, and ends with ``tail`` (stores, a return). Buffers and constants that
    never change, the ufuncs and the pools' ``take`` are bound as default arguments. The same calls in the same
    order as the instruction list (so the same bits); what it saves is the interpreter loop around them, the
    register list and numpy's keyword handling (measured: ~0.2 us per call against ~0.35 us on tiny arrays)."""
    per_call = {reg for reg, _ in loads} | {reg for reg, _ in kernel.outputs} | {reg for reg, _ in kernel.aliases}
    used = sorted({reg for _, a, b, out in kernel.instructions for reg in (a, b, out) if reg >= 0})
    ufuncs: dict = {}
    for f, *_ in kernel.instructions:
        ufuncs.setdefault(f, f"f{len(ufuncs)}")
    namespace = {name: f for f, name in ufuncs.items()}
    defaults = [f"{name}={name}" for name in ufuncs.values()]
    for reg in used:
        if reg not in per_call:
            namespace[f"r{reg}"] = kernel.regs[reg]
            defaults.append(f"r{reg}=r{reg}")
    outputs = [(reg, pool) for reg, pool in kernel.outputs if reg not in skip]
    for reg, pool in outputs:
        if _size(pool.shape) < SMALL:  # a fresh buffer costs less than looking for a free one in the pool
            namespace[f"shape{reg}"], namespace[f"dtype{reg}"] = pool.shape, pool.dtype
            namespace["empty"] = pool.xp.empty
            defaults += [f"shape{reg}=shape{reg}", f"dtype{reg}=dtype{reg}"]
        else:
            namespace[f"take{reg}"] = pool.take
            defaults.append(f"take{reg}=take{reg}")
    if "empty" in namespace:
        defaults.append("empty=empty")
    lines = [f"def program({params}, {', '.join(defaults)}):"]
    lines += _load_lines(loads, sizes or {})
    lines += [f"    r{reg} = take{reg}()" if f"take{reg}" in namespace
              else f"    r{reg} = empty(shape{reg}, dtype{reg})" for reg, _ in outputs]
    lines += [f"    r{reg} = r{owner}" for reg, owner in kernel.aliases]
    for f, a, b, out in kernel.instructions:
        # (numpy deprecates a positional out for maximum and minimum only)
        target = f"out=r{out}" if getattr(f, "__name__", "") in ("maximum", "minimum") else f"r{out}"
        operands = f"r{a}, {target}" if b < 0 else f"r{a}, r{b}, {target}"
        lines.append(f"    {ufuncs[f]}({operands})")
    lines += [f"    {line}" for line in tail] or ["    return None"]
    source = "\n".join(lines)
    exec(source, namespace)
    program = namespace["program"]
    program.source = source  # (for reading; benchmarks/NOTES.md quotes such programs)
    return program


class FusedGroup:
    """Consecutive fused steps of a plan, run as one program (and, where it could be recorded, their backward
    as another: ``backward``)."""

    FRAMES = 4  # frames kept per group (a frame in use by a live graph is not reused; more are made as needed)

    def __init__(self, plan, indices: list, program: Program, reg_of_slot: dict, extras: dict):
        self.indices = indices
        self.names = [plan.steps[i].cls.__name__ for i in indices]
        first = plan.steps[indices[0]]
        used_after = _used_after(plan, indices)
        self.inputs = [(reg, slot) for slot, reg in reg_of_slot.items() if program.kinds[reg] == "input"]
        self.outputs = sorted((reg, slot) for slot, reg in reg_of_slot.items()
                              if program.kinds[reg] == "result" and slot in used_after)
        self.kernel = FusedKernel(program, [reg for reg, _ in self.inputs], [reg for reg, _ in self.outputs],
                                  first.backend)
        self.shapes = {slot: program.values[reg].shape for slot, reg in reg_of_slot.items()}
        self.extras = extras  # per step index: the attributes its forward set (for its backward)
        self.backward = None
        self.framed = ()  # (register, shape, dtype) of the values written into a frame (``use_frame``)
        self.frames: list = []
        self.batch_sizes: list = []  # the frame's first values, in batches of these sizes (one array each)
        self._make_straight()

    def _make_straight(self) -> None:
        kernel = self.kernel
        if kernel.size:
            return
        # reads its inputs from the plan's values and stores its outputs there itself; with a backward, returns
        # the list of values the backward reads (``backward.kept``'s order)
        framed = {reg for reg, _, _ in self.framed}
        reg_of = {slot: reg for reg, slot in self.inputs + self.outputs}
        tail = [f"values[{slot}] = r{reg}" for reg, slot in self.outputs if reg not in framed]
        params, loads = "values", [(reg, f"values[{slot}]") for reg, slot in self.inputs]
        if self.framed:
            params = "values, frame"
            loads += [(reg, f"frame[{k}]") for k, (reg, _, _) in enumerate(self.framed)]
            tail += [f"frame[{k}] = r{reg_of[slot]}" for k, slot in enumerate(self.backward.kept)
                     if k >= len(self.framed)]
            tail.append("return frame")
        elif self.backward is not None and all(slot in reg_of for slot in self.backward.kept):
            tail.append("return [" + ", ".join(f"r{reg_of[slot]}" for slot in self.backward.kept) + "]")
        kernel.straight = _straight_line(kernel, params, loads, tail, skip=framed, sizes={
            "frame": len(self.backward.kept) + len(self.batch_sizes)} if self.framed else None)

    def use_frame(self, saved_only: set) -> None:
        """Values only the backward reads (``saved_only``: no later step reads them, the call does not return
        them) go into a *frame*, a list of small arrays allocated once and reused at every call whose previous
        frame no graph holds any more (its reference count shows it: the backward holds the frame itself, and the
        values in it are handed to nothing else), instead of one fresh array each per call. Small groups only
        (every value the backward reads under ``SMALL`` elements: a frame also holds the group's other saved
        values until it is reused)."""
        kernel, backward = self.kernel, self.backward
        if kernel.size or backward is None:
            return
        reg_of = {slot: reg for reg, slot in self.inputs + self.outputs}
        if any(slot not in reg_of or _size(self.shapes[slot]) >= SMALL for slot in backward.kept):
            return
        pools = dict(kernel.outputs)
        framed = [slot for slot in backward.kept if slot in saved_only and reg_of[slot] in pools]
        if not framed:
            return
        # values whose static derivative parts run batched lie one after another in one array (``_batched``)
        batches = backward.plan_batches(set(framed))
        batched = [slot for leaves in batches for slot in leaves]
        framed = batched + [slot for slot in framed if slot not in set(batched)]
        backward.order_kept(framed + [slot for slot in backward.kept if slot not in framed], batches)
        self.framed = tuple((reg_of[slot], pools[reg_of[slot]].shape, pools[reg_of[slot]].dtype) for slot in framed)
        self.batch_sizes = [len(leaves) for leaves in batches]
        self._xp = pools[reg_of[framed[0]]].xp
        self._make_straight()

    def _frame(self) -> list:
        for frame in self.frames:
            if sys.getrefcount(frame) == 3:  # the list of frames, this loop's name, getrefcount's argument
                return frame
        empty = self._xp.empty
        frame, bases, position = [], [], 0
        for k in self.batch_sizes:  # a batch's values: consecutive parts of one array
            _, shape, dtype = self.framed[position]
            size = _size(shape)
            base = empty((k * size,), dtype)
            bases.append(base.reshape((k,) + tuple(shape)))
            frame += [base[i * size:(i + 1) * size].reshape(shape) for i in range(k)]
            position += k
        frame += [empty(shape, dtype) for _, shape, dtype in self.framed[position:]]
        frame += [None] * (len(self.backward.kept) - len(self.framed)) + bases
        if len(self.frames) < self.FRAMES:
            self.frames.append(frame)
        return frame

    def retire(self, frame) -> None:
        """A frame whose values were handed to graph nodes (the unfused backward): never reused."""
        self.frames = [f for f in self.frames if f is not frame]

    def run(self, values: list):
        """Run the group on ``values``; returns the list of values its backward reads (None: not made here)."""
        kernel = self.kernel
        if kernel.straight is not None:
            state = kernel.quiet
            token = state[0].set(state[1]) if state is not None else None
            try:
                if self.framed:
                    return kernel.straight(values, self._frame())
                return kernel.straight(values)
            finally:
                if token is not None:
                    state[0].reset(token)
        regs = kernel.regs
        for reg, slot in self.inputs:
            regs[reg] = values[slot]
        kernel.execute()
        for reg, slot in self.outputs:
            values[slot] = regs[reg]
        kernel.clear()
        return None

    def describe(self) -> str:
        kernel = self.kernel
        text = (f"{' -> '.join(self.names)}: {len(kernel.instructions)} ufunc calls into reused buffers "
                f"({len(kernel.outputs)} pooled output(s), {kernel.scratch_bytes / 2**20:.2f} MiB scratch)")
        if self.backward is not None:
            text += f"; backward fused: {len(self.backward.kernel.instructions)} ufunc calls"
        return text


class FusedBackward:
    """The backward of a fused group whose only value used outside is its last step's output: the nodes'
    array derivatives, recorded on stand-ins in the engine's order, as one program. It runs when that output's
    gradient is complete, and hands the gradients of the group's inputs back in the order eager mode adds them."""

    def __init__(self, kernel: FusedKernel, grad_reg: int, grad_slot: int, saved: list, outgoing: list,
                 members: set, sample, program: Program, inputs: list, escaping: list, backend):
        self.kernel, self.grad_reg, self.grad_slot = kernel, grad_reg, grad_slot
        self.program, self.unit_program = program, None  # (recorded programs, for ``order_kept``'s batches)
        self._build_args = (inputs, escaping, backend)
        self.batches = []  # tuples of kept slots the frame lays out as one array each (``plan_batches``)
        self.framed: set = set()
        self.saved = saved  # (slot, register) of the forward values the derivatives read
        self.kept = sorted({slot for slot, _ in saved})  # what a replay keeps for this backward: a list, this order
        self.kept_index = {slot: k for k, slot in enumerate(self.kept)}
        self.outgoing = outgoing  # (slot, register): each input's contributions summed in eager mode's order
        self.members = members
        self.shape, self.dtype = sample.shape, sample.dtype
        self.scalar_ok = all(reg != grad_reg for _, reg in outgoing)  # the gradient itself is not handed on
        self.inner_slots = ()  # (in a piece: the group's other results, which the Python code may have used)
        self.unit = None  # the program for a gradient of exactly 1 (``set_unit``), or None
        self._make_straight(kernel)

    def order_kept(self, order: list, batches: list = ()) -> None:
        """Keep the values in this order (the forward's frame first: FusedGroup.use_frame); ``batches``: groups of
        kept slots the frame lays out one after another in one array, appended to the kept list (see
        ``plan_batches``)."""
        self.kept = list(order)
        self.kept_index = {slot: k for k, slot in enumerate(self.kept)}
        self.batches = list(batches)
        inputs, escaping, backend = self._build_args
        for name, program in (("kernel", self.program), ("unit", self.unit_program)):
            if program is None:
                continue
            loads = []
            if self.batches:
                program, leaf_regs = _batched(program, self.grad_reg, self.saved, self.batches, backend.xp)
                program, lead_regs = _deferred(program, self.saved, set(self.framed), set(escaping), self.batches,
                                               backend.xp)
                loads = [(reg, f"kept[{len(self.kept) + b}]") for b, reg in {**leaf_regs, **lead_regs}.items()]
            kernel = FusedKernel(program, inputs + [reg for _, reg in loads], escaping, backend)
            self._make_straight(kernel, loads)
            setattr(self, name, kernel)

    def plan_batches(self, framed: set) -> list:
        """The groups of framed kept slots the frame lays out as one array each: those whose static derivative
        parts run batched (``_static_chains``), then those that deferred sets read (``_deferred_groups``)."""
        self.framed = set(framed)
        layouts = [leaves for leaves, _ in _static_chains(self.program, self.grad_reg, self.saved, framed)]
        if not layouts:
            return []  # (the deferred sets are found in the program the static batches leave)
        program, _ = _batched(self.program, self.grad_reg, self.saved, layouts, self._build_args[2].xp)
        slot_of = {reg: slot for slot, reg in self.saved}
        taken = {slot for leaves in layouts for slot in leaves}
        for members, operand_kinds in _deferred_groups(program, self.saved, framed, set(self._build_args[1])):
            for j, kind in enumerate(operand_kinds):
                if kind == "kept":
                    leaves = tuple(slot_of[program.instructions[n][1][j]] for n in members)
                    if leaves not in layouts and not taken & set(leaves):
                        layouts.append(leaves)
                        taken.update(leaves)
        return layouts

    def _make_straight(self, kernel, extra_loads=()) -> None:
        if not kernel.size:
            loads = [(self.grad_reg, "g")] + [(reg, f"kept[{self.kept_index[slot]}]") for slot, reg in self.saved]
            kernel.straight = _straight_line(kernel, "kept, g", loads + list(extra_loads),
                                             ["return (" + "".join(f"({slot}, r{reg}), " for slot, reg in self.outgoing)
                                              + ")"], sizes={"kept": len(self.kept) + len(self.batches)})

    def set_unit(self, program, inputs: list, escaping: list, backend) -> None:
        """Record the variant of the program run when the incoming gradient is one value equal to 1 (a sum's
        gradient in ``loss.backward()``): each ``g * v`` whose result has ``v``'s shape and dtype is ``v`` itself,
        bit for bit (1 is the multiplicative identity in IEEE arithmetic, -0.0, infinities and quiet NaNs
        included), so the call is dropped and later calls read ``v``. Nothing is made when no call drops."""
        renamed: dict = {}
        instructions = []
        values = program.values
        for f, operands, out in program.instructions:
            operands = tuple(renamed.get(r, r) for r in operands)
            if getattr(f, "__name__", "") == "multiply" and self.grad_reg in operands and out not in escaping:
                other = operands[1] if operands[0] == self.grad_reg else operands[0]
                value = values[other]
                if (other != self.grad_reg and getattr(value, "shape", None) == values[out].shape
                        and getattr(value, "dtype", None) == values[out].dtype):
                    renamed[out] = other
                    continue
            instructions.append((f, operands, out))
        if not renamed:
            return
        unit = Program()
        unit.values, unit.kinds, unit.instructions = values, program.kinds, instructions
        kernel = FusedKernel(unit, inputs, escaping, backend)
        self._make_straight(kernel)
        self.unit, self.unit_program = kernel, unit

    def applies(self, g, ndarray) -> bool:
        return type(g) is ndarray and g.dtype == self.dtype and g.shape == self.shape

    def run(self, g, kept: list) -> list:
        if self.scalar_ok and g.size and not any(g.strides):  # a broadcast single value (sum's gradient): numpy's
            # scalar loops are faster than a stride-0 array's, and give the same products
            return self.run_value(g[(0,) * g.ndim], kept)
        return self._run(self.kernel, g, kept)

    def run_value(self, g, kept: list) -> list:
        """``run`` for a gradient that is one value everywhere, given as that value (a numpy scalar)."""
        return self._run(self.unit if self.unit is not None and g == 1 else self.kernel, g, kept)

    def _run(self, kernel, g, kept: list) -> list:
        regs = kernel.regs
        if kernel.straight is not None:
            state = kernel.quiet
            if state is None:
                return kernel.straight(kept, g)
            token = state[0].set(state[1])
            try:
                return kernel.straight(kept, g)
            finally:
                state[0].reset(token)
        regs[self.grad_reg] = g
        index = self.kept_index
        for slot, reg in self.saved:
            regs[reg] = kept[index[slot]]
        kernel.execute()
        result = [(slot, regs[reg]) for slot, reg in self.outgoing]
        kernel.clear()
        regs[self.grad_reg] = None
        return result


def _build_backward(plan, group: FusedGroup, traced_arrays: dict):
    """Record the group's backward (see FusedBackward), or None when it is not a plain chain of array
    derivatives with one gradient coming in."""
    members = set(group.indices)
    steps = plan.steps
    produced = {slot for i in members for slot in steps[i].outputs}
    consumed_outside = {slot for _, slot in group.outputs} - _saved_only(plan, group)
    last = steps[group.indices[-1]]
    if consumed_outside != {last.outputs[0]} or last.traced is None:
        return None
    verify = False  # a derivative written in Tensor ops: the recording is checked against the Tensor path
    for i in members:
        traced = steps[i].traced
        if traced is not None and (not traced._arrays or traced._uniform is None):
            verify = True
    state = steps[group.indices[0]].backend.quiet_fp_state  # (the recording computes on the traced values: as
    token = state[0].set(state[1]) if state is not None else None  # the kernels, silent on overflow and NaN)
    try:
        with grad_mode.set_grad_enabled(False):  # as the engine runs a first-order backward
            unit = _record_backward(plan, group, traced_arrays, members, produced, last)
        if unit is not None and verify and not _verified(plan, group, unit, traced_arrays):
            return None
        return unit
    finally:
        if token is not None:
            state[0].reset(token)


def _record_backward(plan, group, traced_arrays: dict, members: set, produced: set, last):
    steps = plan.steps
    program = Program()
    sample_array = traced_arrays[last.outputs[0]]
    sample = sample_array * 0 + 1  # a gradient of ones (values only matter to the recording's own run)
    grad_reg = program.register(sample, "input")
    flowing = {last.outputs[0]: Symbolic(sample, grad_reg, program)}
    saved_regs, outgoing = [], []
    for i in plan.schedule:
        if i not in members:
            continue
        step = steps[i]
        incoming = [flowing.pop(slot, None) for slot in step.outputs]
        if all(g is None for g in incoming):
            continue
        node = step.cls.__new__(step.cls)
        node.backend, node.device = step.backend, step.device
        node.__dict__.update(group.extras[i])
        saved = []
        for entry in step.saved:
            slot = None
            if entry is not None and entry[0] == "arg":
                slot = dict(step.arg_slots)[entry[1]]
            elif entry is not None and entry[0] == "out":
                slot = step.outputs[entry[1]]
            if slot is None:
                saved.append(entry[1] if entry is not None else None)
                continue
            reg = program.register(traced_arrays[slot], "input")
            saved_regs.append((slot, reg))
            saved.append(Symbolic(traced_arrays[slot], reg, program))
        node._saved = tuple(saved)
        traced = step.traced
        node._input_meta, node.next_functions, node._n_outputs = traced._input_meta, traced.edges, traced._n_outputs
        node._uniform = traced._uniform  # (a node's array path may read it)
        try:
            grads = node._evaluate_on_arrays(incoming)
        except NotFusable:
            return None
        except Exception:  # the derivative needed more than ufuncs
            return None
        for position, slot in step.arg_slots:
            g = grads[position] if position < len(grads) else None
            if g is None or traced._input_meta[position] is None:
                continue
            if not isinstance(g, Symbolic) or g.shape != traced._input_meta[position][0]:
                return None
            if slot in produced:
                old = flowing.get(slot)
                try:
                    flowing[slot] = g if old is None else old + g
                except NotFusable:
                    return None
            else:
                outgoing.append((slot, g.reg))
    if flowing:
        return None
    positions = [plan.schedule.index(i) for i in members if i in plan.schedule]
    if positions and max(positions) - min(positions) + 1 != len(positions):
        return None  # another node runs between the group's nodes in the engine's order: its gradients would
        # meet the group's in another order
    # an input no other recorded step reads gets its contributions summed inside the program (one buffer, not
    # one each), in eager mode's order; one that others read too gets them one by one, each added where the
    # engine adds it (contributions from outside the group may come before, and sums are not associative)
    elsewhere = {slot for i, step in enumerate(steps) if i not in members and step.traced is not None
                 for _, slot in step.arg_slots}
    combined: dict = {}
    separate = []
    for slot, reg in outgoing:
        if slot in elsewhere:
            separate.append((slot, reg))
            continue
        value = Symbolic(program.values[reg], reg, program)
        combined[slot] = value if slot not in combined else combined[slot] + value
    outgoing = [(slot, value.reg) for slot, value in combined.items()] + separate
    escaping = sorted({reg for _, reg in outgoing})  # (a register handed on twice is one buffer)
    inputs = [grad_reg] + [reg for _, reg in saved_regs]
    kernel = FusedKernel(program, inputs, escaping, steps[group.indices[0]].backend)
    unit = FusedBackward(kernel, grad_reg, last.outputs[0], saved_regs, outgoing, members, sample_array,
                         program, inputs, escaping, steps[group.indices[0]].backend)
    if unit.scalar_ok:
        unit.set_unit(program, inputs, escaping, steps[group.indices[0]].backend)
    if plan.outside_reads is not None:
        unit.inner_slots = tuple(sorted(produced - {last.outputs[0]}))
    return unit


def _verified(plan, group, unit, traced_arrays: dict) -> bool:
    """The recorded backward gives the unfused nodes' gradients bit for bit on the traced values and a sample
    gradient (random normal values: ones would hide a dropped product)."""
    steps = plan.steps
    last = steps[group.indices[-1]]
    sample = traced_arrays[last.outputs[0]]
    xp = steps[group.indices[0]].backend.xp
    g = (xp.sin(xp.arange(sample.size, dtype=sample.dtype)) * 3).reshape(sample.shape)  # (varied, of both signs)
    kept = [traced_arrays[slot] for slot in unit.kept]
    fused: dict = {}
    for slot, contribution in unit.run(g, kept):
        fused[slot] = contribution if slot not in fused else fused[slot] + contribution
    values = dict(traced_arrays)
    flowing = {last.outputs[0]: g}
    ndarray = steps[group.indices[0]].backend.ndarray
    with grad_mode.set_grad_enabled(False):
        for i in plan.schedule:
            if i in unit.members and steps[i].traced is not None:
                backward.step_backward(steps[i], fused_node(steps[i], group, values, i), flowing, ndarray)
    for slot, value in fused.items():
        expected = flowing.get(slot)
        if expected is None or not hasattr(expected, "dtype"):
            return False
        if expected.shape != value.shape or expected.dtype != value.dtype or not _bit_equal(value, expected):
            return False
    return True


# ufuncs whose results are correctly rounded IEEE operations: a value's bits do not depend on where it sits in
# an array (numpy's SIMD loops and their tails agree), so running them on a longer array is bit-identical
_EXACT = {"add", "subtract", "multiply", "negative", "true_divide", "square"}


def _static_chains(program, grad_reg: int, saved: list, framed: set) -> list:
    """``[(leaf slots, chains)]``: the backward's *static* calls - exact ufuncs on one kept value and constants,
    not on the gradient (the tanh derivative's ``t * t`` and ``1 - tt``) - grouped by the computation they make:
    each chain computes, from its own framed kept value, a register that non-static calls read, and all chains
    of a group make the same computation on values of one shape and dtype. A group of K chains then runs as one
    call per step on the K values laid out one after another (one call instead of K). ``chains``: per chain,
    (its result register, its calls' indices in program order)."""
    kinds, values = program.kinds, program.values
    slot_of = {reg: slot for slot, reg in saved}
    signature, leaf = {}, {}
    for reg, kind in enumerate(kinds):
        value = values[reg]
        if kind == "input" and reg != grad_reg and reg in slot_of and slot_of[reg] in framed:
            signature[reg] = ("kept", tuple(value.shape), str(value.dtype))
            leaf[reg] = slot_of[reg]
        elif kind == "const" and type(value) in (int, float, bool):
            signature[reg] = ("number", type(value).__name__, repr(value))
    calls = {}  # result register -> call index
    for n, (f, operands, out) in enumerate(program.instructions):
        if getattr(f, "__name__", "") not in _EXACT or not all(r in signature for r in operands):
            continue
        leaves = {leaf[r] for r in operands if r in leaf}
        if len(leaves) != 1 or kinds[out] != "result":
            continue
        signature[out] = (f.__name__, tuple(signature[r] for r in operands), str(values[out].dtype))
        leaf[out] = leaves.pop()
        calls[out] = n
    readers: dict = {}
    for _, operands, out in program.instructions:
        for r in operands:
            readers.setdefault(r, set()).add(out)
    frontier = [reg for reg in calls if any(out not in calls for out in readers.get(reg, ()))]
    groups: dict = {}
    for reg in frontier:
        groups.setdefault(signature[reg], []).append(reg)
    result = []
    frontier_set = set(frontier)
    for regs in groups.values():
        chains, leaves = [], []
        for reg in sorted(regs, key=calls.get):
            members, stack = set(), [reg]
            while stack:
                r = stack.pop()
                if r in calls and r not in members:
                    members.add(r)
                    stack.extend(program.instructions[calls[r]][1])
            inner = members - {reg}
            if any(r in frontier_set for r in inner) or any(not readers.get(r, set()) <= members for r in inner):
                break  # a value inside the chain is read elsewhere: not batched
            chains.append((reg, sorted(calls[r] for r in members)))
            leaves.append(leaf[reg])
        else:
            if len(chains) >= 2 and len(set(leaves)) == len(leaves):
                result.append((tuple(leaves), chains))
    return result


def _batched(program, grad_reg: int, saved: list, batches: list, xp):
    """The program with each batch's chains replaced by one call per step on the batch's kept values laid out
    in one array (a new input register, loaded from the frame), writing into buffers made here ("fixed"
    registers); each chain's result register becomes a fixed view of its part of the last buffer. Returns the
    program and ``{batch number: input register}``."""
    chains_of = {leaves: chains for leaves, chains in _static_chains(program, grad_reg, saved, {
        slot for leaves in batches for slot in leaves})}
    values, kinds = list(program.values), list(program.kinds)
    slot_of = {reg: slot for slot, reg in saved}
    removed, front, leaf_regs = set(), [], {}
    for b, leaves in enumerate(batches):
        chains = chains_of.get(tuple(leaves))
        if chains is None:
            continue
        first_reg, first_calls = chains[0]
        sample = values[first_reg]
        k = len(chains)
        lead = len(values)
        values.append(xp.empty((k,) + sample.shape, sample.dtype))
        kinds.append("input")
        leaf_regs[b] = lead
        mapped = {}
        for index in first_calls:
            f, operands, out = program.instructions[index]
            new_operands = []
            for r in operands:
                if r in mapped:
                    new_operands.append(mapped[r])
                elif kinds[r] == "input" and r in slot_of:
                    new_operands.append(lead)
                else:
                    new_operands.append(r)
            values.append(xp.empty((k,) + sample.shape, values[out].dtype))
            kinds.append("fixed")
            mapped[out] = len(values) - 1
            front.append((f, tuple(new_operands), mapped[out]))
        last = values[mapped[first_reg]]
        for position, (reg, calls) in enumerate(chains):
            values[reg] = last[position]
            kinds[reg] = "fixed"
            removed.update(calls)
    rewritten = Program()
    rewritten.values, rewritten.kinds = values, kinds
    rewritten.instructions = front + [ins for n, ins in enumerate(program.instructions) if n not in removed]
    return rewritten, leaf_regs


def _deferred_groups(program, saved: list, framed: set, escaping: set) -> list:
    """Calls the backward makes once per round whose results nothing reads until after the last round (the
    contributions to an input's gradient, added up at the end: ``-g`` for ``y``, ``g * s`` for ``x`` in a chain
    ``(z + y) * x - y``): ``[(call indices, operand kinds)]`` for each set of such calls that make the same
    computation (one exact ufunc, operands of one shape and dtype each: a value made by an earlier call, a framed
    kept value, the same register, or the same number). Such a set runs as one call after its last member, on
    its members' operands laid out as rows of one array each (``_deferred``)."""
    kinds, values = program.kinds, program.values
    slot_of = {reg: slot for slot, reg in saved}
    defined = {out: n for n, (_, _, out) in enumerate(program.instructions)}
    first_read: dict = {}
    for n, (_, operands, _) in enumerate(program.instructions):
        for r in operands:
            first_read.setdefault(r, n)
    groups: dict = {}
    for n, (f, operands, out) in enumerate(program.instructions):
        if getattr(f, "__name__", "") not in _EXACT or kinds[out] != "result" or out in escaping:
            continue
        key = [f.__name__, values[out].shape, str(values[out].dtype)]
        for r in operands:
            value = values[r]
            if kinds[r] == "result" and r in defined and r not in escaping:
                key.append(("row", value.shape, str(value.dtype)))
            elif kinds[r] == "input" and slot_of.get(r) in framed:
                key.append(("kept", value.shape, str(value.dtype)))
            elif kinds[r] == "const" and type(value) in (int, float, bool):
                key.append(("number", type(value).__name__, repr(value)))
            else:
                key.append(("same", r))
        groups.setdefault(tuple(key), []).append(n)
    end = len(program.instructions)
    result = []
    for key, members in groups.items():
        while members:  # keep the members whose results are first read after the last kept member
            kept = [n for n in members if first_read.get(program.instructions[n][2], end) > members[-1]]
            if kept == members:
                break
            members = kept
        if len(members) < 2:
            continue
        kinds_of = [entry[0] if type(entry) is tuple else None for entry in key[3:]]
        columns = [[program.instructions[n][1][j] for n in members] for j in range(len(kinds_of))]
        if any(kind in ("row", "kept") and len(set(column)) != len(column) for kind, column in zip(kinds_of, columns)):
            continue
        if any(kind == "kept" and len({slot_of[r] for r in column}) != len(column)
               for kind, column in zip(kinds_of, columns)):
            continue
        result.append((members, kinds_of))
    return result


def _deferred(program, saved: list, framed: set, escaping: set, layouts: list, xp):
    """The program with each deferred set (``_deferred_groups``) run as one call on rows: the registers its
    members read that earlier calls make become rows of one array ("fixed" views, so those calls write there),
    framed kept values come as one array from the frame (``layouts``: the frame's batches), and the members'
    results are rows of the call's output. Returns the program and ``{batch number: input register}`` for the
    frame arrays it reads."""
    groups = _deferred_groups(program, saved, framed, escaping)
    if not groups:
        return program, {}
    values, kinds = list(program.values), list(program.kinds)
    slot_of = {reg: slot for slot, reg in saved}
    row_of: dict = {}  # register -> (array register, row)
    layout_index = {tuple(leaves): b for b, leaves in enumerate(layouts)}
    lead_regs: dict = {}
    placed: dict = {}  # index of a group's last member -> its call
    removed = set()

    def rows_for(regs):
        """The array register whose rows are ``regs`` (made, or found when they already are one's rows)."""
        found = {row_of.get(r) for r in regs}
        if None not in found:
            arrays = {a for a, _ in found}
            if len(arrays) == 1 and [row_of[r][1] for r in regs] == list(range(len(regs))):
                return arrays.pop()
            return None
        if found != {None} or any(kinds[r] != "result" for r in regs):
            return None
        sample = values[regs[0]]
        values.append(xp.empty((len(regs),) + sample.shape, sample.dtype))
        kinds.append("fixed")
        array = len(values) - 1
        for k, r in enumerate(regs):
            values[r], kinds[r] = values[array][k], "fixed"
            row_of[r] = (array, k)
        return array

    for members, operand_kinds in sorted(groups, key=lambda g: g[0][-1]):
        columns = [[program.instructions[n][1][j] for n in members] for j in range(len(operand_kinds))]
        # check first (nothing is changed for a set that cannot be placed)
        ok = True
        for kind, column in zip(operand_kinds, columns):
            if kind == "kept" and tuple(slot_of[r] for r in column) not in layout_index:
                ok = False
            if kind == "row":
                found = {row_of.get(r) for r in column}
                if None in found and found != {None}:
                    ok = False
                elif None not in found and ([row_of[r] for r in column] !=
                                             [(row_of[column[0]][0], k) for k in range(len(column))]):
                    ok = False
        if not ok:
            continue
        operands = []
        for kind, column in zip(operand_kinds, columns):
            if kind == "row":
                operands.append(rows_for(column))
            elif kind == "kept":
                b = layout_index[tuple(slot_of[r] for r in column)]
                if b not in lead_regs:
                    sample = values[column[0]]
                    values.append(xp.empty((len(column),) + sample.shape, sample.dtype))
                    kinds.append("input")
                    lead_regs[b] = len(values) - 1
                operands.append(lead_regs[b])
            else:  # the same register or number in every member: the first member's
                operands.append(column[0])
        outs = [program.instructions[n][2] for n in members]
        output = rows_for(outs)
        f = program.instructions[members[0]][0]
        placed[members[-1]] = (f, tuple(operands), output)
        removed.update(members)
    rewritten = Program()
    rewritten.values, rewritten.kinds = values, kinds
    instructions = []
    for n, instruction in enumerate(program.instructions):
        if n not in removed:
            instructions.append(instruction)
        if n in placed:
            instructions.append(placed[n])
    rewritten.instructions = instructions
    return rewritten, lead_regs


def _saved_only(plan, group) -> set:
    """Slots of the group's escaping values that no step outside the group reads and the call does not return."""
    inside = set(group.indices)
    read = {ref.slot for ref in plan.output_slots} if plan.outside_reads is None else set(plan.outside_reads)
    for i, step in enumerate(plan.steps):
        if i not in inside:
            read.update(slot for _, slot in step.arg_slots)
    return {slot for _, slot in group.outputs if slot not in read}


def _used_after(plan, indices: list) -> set:
    """Slots read outside the steps ``indices`` (later steps, outputs) or saved for backward by any step."""
    inside = set(indices)
    used = {ref.slot for ref in plan.output_slots}
    for i, step in enumerate(plan.steps):
        if i not in inside:
            used.update(slot for _, slot in step.arg_slots)
        if step.traced is not None:
            for entry in step.saved:
                if entry is not None and entry[0] == "arg":
                    used.add(dict(step.arg_slots)[entry[1]])
                elif entry is not None and entry[0] == "out":
                    used.add(step.outputs[entry[1]])
    return used


def _record_step(step, program: Program, reg_of_slot: dict, traced_arrays: dict):
    """Run one step's forward on stand-ins; returns the attributes it set, or raises NotFusable."""
    args = list(step.args)
    for position, slot in step.arg_slots:
        reg = reg_of_slot.get(slot)
        if reg is None:
            reg = reg_of_slot[slot] = program.register(traced_arrays[slot], "input")
        args[position] = Symbolic(program.values[reg], reg, program)
    node = step.cls.__new__(step.cls)
    node.backend, node.device = step.backend, step.device
    if step.extras:
        node.__dict__.update(step.extras)
    try:
        result = node.forward(*args, **step.params)
    except NotFusable:
        raise
    except Exception as exc:  # the op's forward needed more than ufuncs (an attribute, a method)
        raise NotFusable(str(exc)) from None
    if type(result) is not Symbolic:
        raise NotFusable("the op's result is not a recorded ufunc result")
    for value in node.__dict__.values():
        if isinstance(value, Symbolic):
            raise NotFusable("the op keeps an array for its backward")
    traced = traced_arrays[step.outputs[0]]
    if (result.value.shape != traced.shape or result.value.dtype != traced.dtype or not traced.flags.c_contiguous
            or not _bit_equal(result.value, traced)):
        raise NotFusable("the recorded ufuncs do not reproduce the traced result bit for bit")
    reg_of_slot[step.outputs[0]] = result.reg
    # the traced array stands for it from here (the same bits): the recorded copy is freed now, so the next
    # recording reuses its memory instead of faulting in fresh pages (most of a large chain's compile time)
    program.values[result.reg] = traced
    return dict(node.__dict__)


def _bit_equal(a, b) -> bool:
    """Same bits (floating arrays only reach here: NaNs compare by their bit patterns too)."""
    return bool((a.view(f"u{a.dtype.itemsize}") == b.view(f"u{b.dtype.itemsize}")).all())


def fuse(plan, tracer, late: frozenset = frozenset()) -> None:
    """Find the plan's fusable runs of steps and give their first step the group to run. A step reading a slot in
    ``late`` (a piece's foreign tensor, known only when that op is called: pieces.py) can only start a group."""
    traced_arrays = {i: slot.tensor._array for i, slot in enumerate(tracer.slots)}
    plan.fused_groups = []
    plan.backward_units = {}
    run: list = []
    program, reg_of_slot, extras = Program(), {}, {}

    def close():
        nonlocal program, reg_of_slot, extras, run
        if len(run) >= 2 or (run and len(program.instructions) >= 2):  # (one op of several ufunc calls: GELU)
            group = FusedGroup(plan, list(run), program, reg_of_slot, extras)
            if plan.records:
                group.backward = _build_backward(plan, group, traced_arrays)
                if group.backward is not None and plan.outside_reads is None:  # (a piece hands out every value)
                    group.use_frame(_saved_only(plan, group))
            plan.fused_groups.append(group)
            if group.backward is not None:
                plan.backward_units[run[-1]] = group.backward
            for n, i in enumerate(run):
                plan.steps[i].fused = group
                plan.steps[i].fused_head = n == 0
                plan.steps[i].fused_group = group
        run, program, reg_of_slot, extras = [], Program(), {}, {}

    for i, step in enumerate(plan.steps):
        if step.views is not None or len(step.outputs) != 1 or not _candidate(step, traced_arrays):
            close()
            continue
        if late and any(slot in late for _, slot in step.arg_slots):
            close()
        marker = (len(program.values), len(program.instructions))
        try:
            extras[i] = _record_step(step, program, reg_of_slot, traced_arrays)
            run.append(i)
        except NotFusable:
            del program.values[marker[0]:], program.kinds[marker[0]:], program.instructions[marker[1]:]
            reg_of_slot = {s: r for s, r in reg_of_slot.items() if r < marker[0]}
            close()
    close()


def _candidate(step, traced_arrays: dict) -> bool:
    """Inputs and output are dense row-major arrays of one floating dtype (what a ufunc with out= writes alike)."""
    arrays = [traced_arrays[slot] for _, slot in step.arg_slots] + [traced_arrays[step.outputs[0]]]
    dtype = arrays[-1].dtype
    if dtype.kind != "f" or not all(hasattr(a, "flags") and a.flags.c_contiguous and a.dtype == dtype
                                    for a in arrays):
        return False
    return all(not isinstance(a, Tensor) for a in step.args)
