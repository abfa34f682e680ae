# ctypes DLPack structs, a scriptable producer and random arrays of any dtype, for tests of
# isthmus's DLPack import/export.
import ctypes

import numpy as np

# The spec's constants (DLPack 1.x), used to check what isthmus writes and to fake producers.
kDLCPU, kDLCUDA, kDLCUDAHost = 1, 2, 3
kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 3, 4, 5, 6
kDLFloat8_e4m3fn = 10
READ_ONLY, IS_COPIED = 1, 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", LEGACY_DELETER),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", VERSIONED_DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

# The capsule API through ctypes (void* arguments where the capsule may be mid-destruction).
_api = ctypes.pythonapi
_GetName = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", _api))
_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_IsValidRaw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_GetPointerRaw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, CAPSULE_DESTRUCTOR)(
    ("PyCapsule_New", _api))


def random_array(rng, dtype, shape=(3, 4)):
    """A random NumPy array of `dtype`: 0/1 for bool, integers in [0, 100), standard normal reals
    (complex: random imaginary parts too)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0, 100, size=shape).astype(dt)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def capsule_name(cap):
    """The capsule's name as str."""
    return _GetName(cap).decode()


def versioned_struct(cap):
    """The DLManagedTensorVersioned inside an unconsumed "dltensor_versioned" capsule."""
    p = _GetPointer(cap, b"dltensor_versioned")
    return DLManagedTensorVersioned.from_address(p)


def legacy_struct(cap):
    """The DLManagedTensor inside an unconsumed "dltensor" capsule."""
    p = _GetPointer(cap, b"dltensor")
    return DLManagedTensor.from_address(p)


def _destroy_unconsumed(ptr):
    # The producer's capsule destructor: calls the deleter unless a consumer took the capsule.
    for name, struct in ((b"dltensor_versioned", DLManagedTensorVersioned),
                         (b"dltensor", DLManagedTensor)):
        if _IsValidRaw(ptr, name):
            m = struct.from_address(_GetPointerRaw(ptr, name))
            if m.deleter:
                m.deleter(ctypes.pointer(m))
            return


_DESTRUCTOR = CAPSULE_DESTRUCTOR(_destroy_unconsumed)

# Producers whose capsules were handed out stay alive for the process: a consumer may call a
# deleter (which lives in the producer's ctypes objects) whenever it drops the last view.
_HANDED_OUT = []


class Producer:
    """A DLPack producer over a NumPy buffer whose every field can be set, counting deleter calls.

    Attributes after construction may be changed before calling __dlpack__ (dtype code/bits/
    lanes, device, ndim, shape, strides, flags, version, data, byte_offset). `accepts_keywords`
    False imitates a pre-1.0 producer (bare __dlpack__() only, legacy capsule).
    """

    def __init__(self, array, versioned=True, flags=0, copied=None):
        self.array = array  # kept alive while any capsule may point at it
        self.versioned = versioned
        self.flags = flags
        self.copied = copied  # an array to hand out when copy=True is asked (sets IS_COPIED)
        self.accepts_keywords = True
        self.deleted = 0
        self.calls = []  # the keyword arguments of each __dlpack__ call
        self.device = (kDLCPU, 0)
        self.report_device = None  # what __dlpack_device__ returns (default: self.device)
        self.dtype = _dl_dtype(array.dtype)
        self.version = (1, 0)
        self.ndim = None  # overrides for malformed tensors
        self.shape = None
        self.strides = None
        self.null_strides = False
        self.null_data = False
        self.byte_offset = 0
        self._keep = []

    def _deleter(self, _):
        self.deleted += 1

    def __dlpack_device__(self):
        return self.report_device or self.device

    def __dlpack__(self, **kwargs):
        if kwargs and not self.accepts_keywords:
            raise TypeError("__dlpack__() got unexpected keyword arguments")
        self.calls.append(kwargs)
        versioned = self.versioned and (kwargs.get("max_version") or (0, 0))[0] >= 1
        arr, flags = self.array, self.flags
        if kwargs.get("copy") and self.copied is not None:
            arr, flags = self.copied, flags | IS_COPIED
        return self.capsule(arr, versioned, flags)

    def capsule(self, arr=None, versioned=None, flags=None):
        arr = self.array if arr is None else arr
        versioned = self.versioned if versioned is None else versioned
        flags = self.flags if flags is None else flags
        isz = arr.itemsize
        shape = self.shape if self.shape is not None else arr.shape
        strides = (self.strides if self.strides is not None
                   else tuple(s // isz for s in arr.strides))
        shape_a = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        strides_a = (ctypes.c_int64 * max(len(strides), 1))(*strides)
        t = DLTensor()
        t.data = None if self.null_data else arr.ctypes.data
        t.device = DLDevice(*self.device)
        t.ndim = len(shape) if self.ndim is None else self.ndim
        t.dtype = DLDataType(*self.dtype)
        t.shape = shape_a
        t.strides = None if self.null_strides else strides_a
        t.byte_offset = self.byte_offset
        if versioned:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(*self.version)
            m.deleter = VERSIONED_DELETER(self._deleter)
            m.flags = flags
            name = b"dltensor_versioned"
        else:
            m = DLManagedTensor()
            m.deleter = LEGACY_DELETER(self._deleter)
            name = b"dltensor"
        m.dl_tensor = t
        self._keep += [shape_a, strides_a, m, m.deleter, arr]
        if not _HANDED_OUT or _HANDED_OUT[-1] is not self:
            _HANDED_OUT.append(self)
        return _New(ctypes.addressof(m), name, _DESTRUCTOR)


def _dl_dtype(dt):
    dt = np.dtype(dt)
    code = {"b": kDLBool, "i": kDLInt, "u": kDLUInt, "f": kDLFloat, "c": kDLComplex}[dt.kind]
    return (code, dt.itemsize * 8, 1)


# ---- the DLPack 1.2 C exchange table (`__dlpack_c_exchange_api__`) ----

_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _api))
EXCHANGE_FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object,
                                    ctypes.POINTER(ctypes.c_void_p))
EXCHANGE_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                                   ctypes.POINTER(ctypes.c_void_p))


class ExchangeHeader(ctypes.Structure):
    pass


ExchangeHeader._fields_ = [("version", DLPackVersion),
                           ("prev_api", ctypes.POINTER(ExchangeHeader))]


class ExchangeAPI(ctypes.Structure):
    _fields_ = [
        ("header", ExchangeHeader),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object_no_sync", EXCHANGE_FROM_PY),
        ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
        ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
        ("current_work_stream", EXCHANGE_STREAM),
    ]


class ExchangeTable:
    """One exchange table (its ctypes struct and callbacks, kept alive for the process, as the
    spec asks), counting its calls. `refuse` makes the export fail (-1, no tensor)."""

    def __init__(self, major=1, older=None, refuse=False):
        self.exports = 0
        self.stream_queries = []
        self.refuse = refuse

        def from_py(obj, out):
            self.exports += 1
            if self.refuse:
                return -1
            cap = obj.capsule(versioned=True)
            out[0] = _GetPointer(cap, b"dltensor_versioned")
            _SetName(cap, b"used_dltensor_versioned")  # the tensor is the caller's now
            return 0

        def stream(device_type, device_id, out):
            self.stream_queries.append((device_type, device_id))
            out[0] = None
            return 0

        self.api = ExchangeAPI()
        self.api.header.version = DLPackVersion(major, 3)
        if older is not None:
            self.api.header.prev_api = ctypes.pointer(older.api.header)
        self.api.managed_tensor_from_py_object_no_sync = EXCHANGE_FROM_PY(from_py)
        self.api.current_work_stream = EXCHANGE_STREAM(stream)
        self.older = older
        self.capsule = _New(ctypes.addressof(self.api), b"dlpack_exchange_api",
                            CAPSULE_DESTRUCTOR())
        _HANDED_OUT.append(self)


def exchange_producer(table, array, **kwargs):
    """A Producer over `array` whose type carries `table` as __dlpack_c_exchange_api__."""
    cls = type("ExchangeProducer", (Producer,), {"__dlpack_c_exchange_api__": table.capsule})
    return cls(array, **kwargs)
