// DLPack import: from_dlpack of producers, capsules and exchange tables, and their release.
#include "boundary/bool_bytes.hpp"
#include "boundary/dlpack.hpp"
#include "boundary/dlpack_capsule.hpp"

#include "boundary/dlpack_formats.hpp"
#include "boundary/exchange_streams.hpp"
#include "boundary/qvalue_handle.hpp"
#include "boundary/session.hpp"

#include "isthmus/cuda.hpp"
#include "isthmus/schedule.hpp"

#include <pybind11/numpy.h>

#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <sys/mman.h>
#include <unistd.h>

namespace isthmus::boundary {

// Note [dlpack import]
// ~~~~~~~~~~~~~~~~~~~~
// `q.from_dlpack(x)` calls `x.__dlpack__(max_version=(1, 1), copy=..., dl_device=...)`, falling
// back to a bare `x.__dlpack__()` for producers that predate those keywords (TypeError). It renames
// the capsule "used_..." and wraps the memory without a copy (tensor::wrap: pinned to the CPU or to
// the CUDA device, the producer's deleter as the release callback, run once when the last view of
// the storage is gone). Everything is validated before the capsule is renamed, so a capsule refused
// with an error still belongs to its producer, whose capsule destructor frees it. A copy is made
// instead (and the deleter called at once) when the tensor is read-only (isthmus tensors are
// writable, as for NumPy arrays: Note [wrapping rules]), misaligned (host memory only: misaligned
// device data raises ValueError, Note [misaligned device data]), empty, or copy=True was asked and
// the producer did not set IS_COPIED; with copy=False those cases raise ValueError.

namespace {

// ---- import ----

// Orders the producer's later work after isthmus's queued work on the tensor, before its
// deleter runs (Note [import hand-back]): an event wait on the producer's stream where the
// import knows it, else (or if that wait fails) a host wait for isthmus's stream.
void hand_back(int dev, const std::optional<void*>& exchange_stream) noexcept {
    if (interpreter_finalizing()) return; // the deleter is skipped too (call_deleter)
    const import_hand_back plan = hand_back_plan(exchange_stream);
    if (!plan.host_waits) {
        try {
            cuda::make_stream_wait(plan.producer_stream, dev);
            return;
        } catch (...) { // e.g. the stream is gone: the host waits instead
        }
    }
    wait_for_isthmus(dev);
}

// Takes the parsed tensor (Note [dlpack import]): wraps its memory, or copies it and releases it
// at once. `cap`, when given, is the capsule it came in: renamed "used_..." when taken, and left
// to its producer on an error before that. Without a capsule the tensor is the caller's from the
// start, so every error releases it.
tensor consume_parsed(parsed_capsule& pc, copy_policy policy, PyObject* cap) {
    bool taken = cap == nullptr;
    auto take = [&] {
        if (cap && PyCapsule_SetName(cap, pc.used_name) != 0) throw py::error_already_set();
        taken = true;
    };
    try {
        const bool empty = numel_of(pc.shape) == 0;
        const int dev = pc.cuda_device;
        const resource_id resource = dev < 0 ? MEMRESOURCE_CPU : cuda_resource(dev);
        const char* why = pc.read_only  ? "it is read-only (isthmus tensors are writable)"
                          : !pc.aligned ? "its data is not aligned to its element type"
                                        : nullptr;
        if (!why && !empty && pc.dt == dtype::bool_) {
            bool valid = true;
            {
                py::gil_scoped_release nogil;
                valid = bool_bytes_valid(pc.data, pc.shape, pc.strides, resource);
            }
            if (!valid) // See Note [bool bytes]
                why = "it is a bool tensor holding bytes other than 0 and 1 (a copy reads them "
                      "as x != 0)";
        }
        if (why && policy == copy_policy::never)
            ISTHMUS_THROW(value_error, "from_dlpack: cannot share the tensor without a copy: ", why,
                          "; pass copy=None (or True) to allow a copy");
        const bool copy = why || empty || (policy == copy_policy::always && !pc.is_copied);

        if (copy) {
            tensor out = tensor::empty(pc.shape, pc.dt, resource);
            if (!empty) {
                py::gil_scoped_release nogil;
                // See Note [bool bytes]: bools are read as byte != 0, whatever bytes they hold.
                out.copy_from(
                    pc.dt == dtype::bool_
                        ? bools_from_bytes(pc.data, pc.shape, pc.strides, resource)
                        : tensor::wrap(pc.data, pc.dt, pc.shape, pc.strides, resource, {}));
                // See Note [dlpack streams]: the copy is queued on isthmus's stream; the producer
                // gets its memory back only after it (Note [import hand-back]).
                if (dev >= 0) hand_back(dev, pc.exchange_stream);
            }
            // The bytes are ours now: take the tensor and give the producer's memory back.
            take();
            pc.owner.release();
            return out;
        }
        take();
        // tensor::wrap either throws before its storage owns the callback, or owns it.
        if (dev < 0)
            return tensor::wrap(pc.data, pc.dt, std::move(pc.shape), std::move(pc.strides),
                                resource, [owner = pc.owner]() { owner.release(); });
        return tensor::wrap(pc.data, pc.dt, std::move(pc.shape), std::move(pc.strides), resource,
                            [owner = pc.owner, dev, stream = pc.exchange_stream]() {
                                hand_back(dev, stream); // Note [import hand-back]
                                owner.release();
                            });
    } catch (...) {
        if (taken) pc.owner.release(); // ours (renamed capsule, or none): the deleter is ours
        throw;
    }
}

// Consumes a DLPack capsule (Note [dlpack import]).
tensor consume_capsule(py::handle cap, copy_policy policy) {
    parsed_capsule pc = parse_capsule(cap);
    return consume_parsed(pc, policy, cap.ptr());
}

// from_dlpack's `device=`: nullopt (None), -1 for the CPU, n for CUDA device n ("cuda",
// "cuda:n", (kDLCUDA, n)); CUDA devices must exist (RuntimeError without CUDA).
std::optional<int> import_device(py::handle device) {
    if (device.is_none()) return std::nullopt;
    if (py::isinstance<py::str>(device)) {
        const std::string d = device.cast<std::string>();
        const std::optional<int> number = device_number(d);
        ISTHMUS_CHECK(number.has_value(), value_error, "from_dlpack: unknown device \"", d,
                      "\"; expected \"cpu\", \"cuda\", \"cuda:N\" or a (device_type, device_id) "
                      "tuple such as (1, 0) or (2, 0)");
        if (*number < 0) return -1;
        const int n = *number;
        require_cuda(detail::concat("from_dlpack(device=\"", d, "\")"), n);
        return n;
    }
    const auto [type, id] = device_pair(device, "from_dlpack: device");
    if (type == dl::kDLCPU && id == 0) return -1;
    if (type == dl::kDLCUDA) {
        ISTHMUS_CHECK(id >= 0 && id < 100000, value_error, "from_dlpack: device ",
                      dl_device_str(type, id), " has no valid device id");
        require_cuda(detail::concat("from_dlpack(device=", dl_device_str(type, id), ")"),
                     static_cast<int>(id));
        return static_cast<int>(id);
    }
    throw_buffer_error(detail::concat("from_dlpack: device ", dl_device_str(type, id),
                                      " is not supported; isthmus holds data on the CPU (1, 0) "
                                      "and on CUDA devices (2, n)"));
}

// `t` on the device `want` asked for (-1: the CPU): itself when it is there, else a copy
// (ValueError when copy=False forbids it).
tensor on_device(tensor t, std::optional<int> want, copy_policy policy) {
    if (!want) return t;
    const resource_id resource = *want < 0 ? MEMRESOURCE_CPU : cuda_resource(*want);
    const resource_id pinned = t.storage()->pinned_to();
    if (pinned == resource || (pinned == -1 && t.location() == resource)) return t;
    ISTHMUS_CHECK(policy != copy_policy::never, value_error, "from_dlpack: the data is on ",
                  get_resource(t.location()).name(), " and device ", get_resource(resource).name(),
                  " was asked: that needs a copy, and copy=False was given");
    py::gil_scoped_release nogil;
    return to_resource(t, resource, true);
}

// Note [dlpack exchange api]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// DLPack 1.2 added a table of C functions that a producer's type carries as
// `__dlpack_c_exchange_api__` (a capsule named "dlpack_exchange_api"; torch.Tensor has one).
// Importing through it skips the Python-level `__dlpack__` and `__dlpack_device__` calls (torch's
// are Python functions costing microseconds, which every `A + t` would pay): the table's
// managed_tensor_from_py_object_no_sync hands over a versioned managed tensor directly, parsed and
// taken like a capsule's (it is ours from the start, so an error releases it here). Streams: the
// function does not synchronise, so for CUDA data isthmus's stream waits (an event, no host wait)
// for the producer's current_work_stream on that device, the order `__dlpack__(stream=)` would have
// given (Note [dlpack streams]). A refusal is a BufferError (the producer's own, or one carrying
// the first line of its message). Tables are looked up once per type (the spec keeps them alive for
// the process); a table is used when it, or one in its prev_api chain, has major version 1. The
// path serves `from_dlpack(x)` without `device=` (which asks the producer to move the data) and
// every inbound conversion of such tensors; the producer's own checks of `__dlpack__` are skipped,
// so tensor_from_dlpack checks torch's requires_grad before the export and its conjugate and
// negative bits after it (the conjugate bit for complex dtypes only), dropping the export when a
// bit is set. Kernel launches read host tensors through the table's borrowed descriptor instead
// (Note [borrowed dlpack tensors]).

// What isthmus knows of a producer type (See Note [dlpack exchange api]).
struct producer_type {
    const dl::DLPackExchangeAPI* api = nullptr; // its exchange table, or none
    // torch's tensor types (subtypes of torch._C.TensorBase, with a table): their memory is never
    // read-only, so the borrowed descriptor serves launches (Note [borrowed dlpack tensors]);
    // and the attributes tensor_from_dlpack reads are the type's descriptors, looked up once
    // (owned references; read as `t.requires_grad`, `t.is_conj()`, `t.is_neg()` would).
    bool torch = false;
    PyObject* requires_grad = nullptr;
    PyObject* is_conj = nullptr;
    PyObject* is_neg = nullptr;
};

bool is_torch_tensor_type(PyTypeObject* type) {
    PyObject* c = PyImport_GetModule(py::str("torch._C").ptr());
    if (!c) {
        PyErr_Clear();
        return false;
    }
    PyObject* base = PyObject_GetAttrString(c, "TensorBase");
    Py_DECREF(c);
    if (!base) {
        PyErr_Clear();
        return false;
    }
    const bool yes = PyType_Check(base) && PyType_IsSubtype(type, (PyTypeObject*)base);
    Py_DECREF(base);
    return yes;
}

// Fills `t` for a type with a table; false (and `t` without torch's parts) if it is not torch's.
bool read_torch_type(PyTypeObject* type, producer_type& t) {
    if (!t.api->dltensor_from_py_object_no_sync || !is_torch_tensor_type(type)) return false;
    auto* ty = reinterpret_cast<PyObject*>(type);
    t.requires_grad = PyObject_GetAttrString(ty, "requires_grad");
    t.is_conj = PyObject_GetAttrString(ty, "is_conj");
    t.is_neg = PyObject_GetAttrString(ty, "is_neg");
    if (t.requires_grad && Py_TYPE(t.requires_grad)->tp_descr_get && t.is_conj && t.is_neg)
        return true;
    PyErr_Clear();
    Py_XDECREF(t.requires_grad);
    Py_XDECREF(t.is_conj);
    Py_XDECREF(t.is_neg);
    t.requires_grad = t.is_conj = t.is_neg = nullptr;
    return false;
}

// `ask` false: only what the cache knows (nullptr for a type not asked yet).
const producer_type* producer_type_of(PyTypeObject* type, bool ask = true) {
    struct entry {
        PyTypeObject* type;
        producer_type what;
    };
    // A few producer types, each asked once; an entry holds a reference to its type, so the
    // address cannot come back as another type. Past the last entry, types are asked each time.
    static entry cache[16];
    static int cached = 0;
    for (int i = 0; i < cached; ++i)
        if (cache[i].type == type) return &cache[i].what;
    if (!ask) return nullptr;
    static PyObject* const attr = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
    producer_type what;
    PyObject* cap = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), attr);
    if (!cap) {
        PyErr_Clear(); // no table: the producer's __dlpack__ serves
    } else {
        if (PyCapsule_IsValid(cap, dl::capsule_exchange_api)) {
            auto* header = static_cast<dl::DLPackExchangeAPIHeader*>(
                PyCapsule_GetPointer(cap, dl::capsule_exchange_api));
            while (header && header->version.major != 1) header = header->prev_api;
            auto* api = reinterpret_cast<const dl::DLPackExchangeAPI*>(header);
            if (api && api->managed_tensor_from_py_object_no_sync && api->current_work_stream)
                what.api = api;
        }
        Py_DECREF(cap);
    }
    if (cached < static_cast<int>(std::size(cache))) {
        if (what.api) what.torch = read_torch_type(type, what);
        Py_INCREF(type);
        cache[cached] = {type, what};
        return &cache[cached++].what;
    }
    static producer_type uncached; // (the GIL is held) its table only
    uncached = {what.api};
    return &uncached;
}

const dl::DLPackExchangeAPI* exchange_api_of(PyTypeObject* type) {
    return producer_type_of(type)->api;
}

// Note [borrowed dlpack tensors]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The exchange table's dltensor_from_py_object_no_sync fills a DLTensor on the consumer's stack
// that points into the producer's own object: no managed tensor is allocated, no shape copied, no
// deleter runs (torch's managed export costs about as much as the rest of a launch's argument
// conversion). DLPack promises that view only until control returns to Python, and it carries no
// flags (no read-only bit), so it serves transient host imports only: the arguments of a kernel
// launch, dropped when parallel_do returns. The tensor still holds a reference to the producer
// object, released like a NumPy array's (Note [array release]), so one kept longer (isthmus's
// autograd may save a launch's input for its backward) reads the producer's storage as long as
// the object keeps it, as a managed export would. It is asked only of producers that never mark
// memory read-only (torch: it has no read-only tensors). CUDA data and every other import take
// the managed export, which carries the flags and the producer's stream.
std::optional<tensor> borrowed_import(py::handle obj, const dl::DLPackExchangeAPI* api,
                                      copy_policy policy) {
    dl::DLTensor view{};
    if (api->dltensor_from_py_object_no_sync(obj.ptr(), &view) != 0) {
        PyErr_Clear(); // the managed export reports the producer's refusal
        return std::nullopt;
    }
    if (view.device.device_type != dl::kDLCPU) return std::nullopt;
    parsed_capsule pc;
    pc.owner.object = obj.inc_ref().ptr();
    try {
        parse_dltensor(pc, &view);
    } catch (...) {
        pc.owner.release();
        throw;
    }
    return consume_parsed(pc, policy, nullptr); // releases the reference on error
}

// Imports `obj` through its type's exchange table (Note [dlpack exchange api]); nullopt when the
// type has none. `pt`: what is known of obj's type. `transient`: see Note [borrowed dlpack
// tensors].
std::optional<tensor> exchange_import(py::handle obj, const producer_type& pt, copy_policy policy,
                                      bool transient) {
    const dl::DLPackExchangeAPI* api = pt.api;
    if (!api) return std::nullopt;
    if (transient && pt.torch)
        if (std::optional<tensor> t = borrowed_import(obj, api, policy)) return t;
    dl::DLManagedTensorVersioned* managed = nullptr;
    if (api->managed_tensor_from_py_object_no_sync(obj.ptr(), &managed) != 0 || !managed) {
        // Refused. Producers are asked for a BufferError, but torch raises RuntimeError with
        // its C++ frames appended: the consumer's error is a BufferError with the first line.
        std::string why = "no reason given";
        if (PyErr_Occurred()) {
            py::error_already_set e;
            if (e.matches(PyExc_BufferError)) throw;
            why = py::str(e.value()).cast<std::string>();
            why = why.substr(0, why.find('\n'));
        }
        throw_buffer_error(detail::concat("from_dlpack: the ", type_name(obj),
                                          " cannot be exported through DLPack: ", why));
    }
    parsed_capsule pc;
    pc.owner = {managed, true};
    try {
        parse_managed(pc, managed);
        if (pc.cuda_device >= 0) {
            void* producer_stream = nullptr;
            if (api->current_work_stream(dl::kDLCUDA, pc.cuda_device, &producer_stream) != 0)
                throw py::error_already_set();
            cuda::stream_wait_for(pc.cuda_device, exchange_producer_stream(producer_stream));
            pc.exchange_stream = producer_stream; // handed back on it (Note [import hand-back])
        }
    } catch (...) {
        pc.owner.release(); // ours, and never handed to a tensor: the producer's memory goes back
        throw;
    }
    return consume_parsed(pc, policy, nullptr); // releases it on error
}

py::str& dlpack_attr() {
    static auto* s = new py::str("__dlpack__");
    return *s;
}

} // namespace

bool has_known_exchange_api(py::handle obj) {
    const producer_type* pt = producer_type_of(Py_TYPE(obj.ptr()), /*ask=*/false);
    return pt && pt->api;
}

bool is_dlpack_producer(py::handle obj) {
    PyObject* o = obj.ptr();
    if (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) || PyUnicode_Check(o) ||
        PyList_Check(o) || PyTuple_Check(o) || o == Py_None || PyBool_Check(o))
        return false;
    if (is_qvalue(obj) || py::isinstance<py::array>(obj)) return false;
    if (exchange_api_of(Py_TYPE(o))) return true; // a torch tensor: asked once per type
    if (PyObject_HasAttr(o, dlpack_attr().ptr()) == 1) return true;
    static PyObject* const cai = PyUnicode_InternFromString("__cuda_array_interface__");
    return PyObject_HasAttr(o, cai) == 1; // CuPy, Numba and other CUDA producers
}

namespace {

// torch.is_grad_enabled(), or true when torch is not imported (Note [requires grad at the
// boundary]). The function is looked up once; torch stays imported once it is.
bool torch_grad_enabled() {
    static PyObject* is_grad_enabled = nullptr;
    if (!is_grad_enabled) {
        PyObject* torch = PyImport_GetModule(py::str("torch").ptr());
        if (!torch) {
            PyErr_Clear();
            return true;
        }
        is_grad_enabled = PyObject_GetAttrString(torch, "is_grad_enabled");
        Py_DECREF(torch);
        if (!is_grad_enabled) {
            PyErr_Clear();
            return true;
        }
    }
    auto on = py::reinterpret_steal<py::object>(PyObject_CallNoArgs(is_grad_enabled));
    if (!on) throw py::error_already_set();
    return on.ptr() != Py_False;
}

} // namespace

tensor tensor_from_dlpack(py::handle obj, copy_policy policy, py::handle device, bool transient) {
    const std::optional<int> want = import_device(device);
    if (PyCapsule_CheckExact(obj.ptr()))
        return on_device(consume_capsule(obj, policy), want, policy);

    // Note [requires grad at the boundary]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // A tensor that requires grad is refused only where autograd would miss isthmus's reads and
    // writes: while torch's grad mode is on. Inside torch.autograd.Function.forward and backward,
    // under torch.no_grad() and in inference mode, torch records nothing for its own ops either, so
    // the tensor is shared as it is (the Quadrants pattern: a kernel called on the tensors a
    // Function receives), through t.detach() (the same memory; torch's own __dlpack__ refuses a
    // tensor that requires grad in any mode). A tensor-like object without torch imported counts as
    // grad mode on.
    static PyObject* const requires_grad = PyUnicode_InternFromString("requires_grad");
    PyObject* const o = obj.ptr();
    const producer_type& pt = *producer_type_of(Py_TYPE(o)); // asked once per type
    const producer_type* torch_type = pt.torch ? &pt : nullptr;
    auto rg = py::reinterpret_steal<py::object>(
        torch_type ? Py_TYPE(torch_type->requires_grad)
                         ->tp_descr_get(torch_type->requires_grad, o, (PyObject*)Py_TYPE(o))
                   : PyObject_GetAttr(o, requires_grad));
    if (!rg) {
        PyErr_Clear(); // no such attribute (as hasattr): not a torch-like tensor
    } else if (rg.ptr() == Py_True) {
        if (torch_grad_enabled())
            throw_buffer_error(
                "cannot share a tensor that requires grad: autograd would not see isthmus's "
                "reads and writes. Pass t.detach() (shares memory) or use "
                "q.torch.from_tensor(t), which detaches");
        return tensor_from_dlpack(obj.attr("detach")(), policy, device, transient);
    }
    // An exchange table exports first (Note [dlpack exchange api]): its dtype spares the
    // conjugate bit's question for real tensors, where the bit cannot be set.
    std::optional<tensor> exported;
    if (!want) exported = exchange_import(obj, pt, policy, transient);
    // Note [conjugate and negative views]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // torch tensors with the conjugate or negative bit set cannot be exported (their memory holds
    // the unconjugated, unnegated values): resolving the bit is a copy, made when copies are
    // allowed and refused (ValueError) with copy=False. An export already made is dropped then.
    py::object resolved;
    if (rg) { // torch-like
        static PyObject* const is_conj = PyUnicode_InternFromString("is_conj");
        static PyObject* const is_neg = PyUnicode_InternFromString("is_neg");
        for (PyObject* method : {is_conj, is_neg}) {
            if (method == is_conj && exported && !is_complex(exported->dtype())) continue;
            PyObject* const descr = !torch_type         ? nullptr
                                    : method == is_conj ? torch_type->is_conj
                                                        : torch_type->is_neg;
            auto bit =
                py::reinterpret_steal<py::object>(descr ? PyObject_Vectorcall(descr, &o, 1, nullptr)
                                                        : PyObject_CallMethodNoArgs(o, method));
            if (!bit) {
                PyErr_Clear(); // no such method: not a torch tensor
                break;
            }
            if (bit.ptr() != Py_True) continue;
            ISTHMUS_CHECK(policy != copy_policy::never, value_error,
                          "cannot share a tensor with the ",
                          method == is_conj ? "conjugate" : "negative",
                          " bit set without a copy; pass copy=None (or True), or resolve it "
                          "first (t.resolve_conj(), t.resolve_neg())");
            resolved = obj.attr("resolve_conj")().attr("resolve_neg")();
            break;
        }
    }
    if (resolved) {
        exported.reset();
        return tensor_from_dlpack(resolved,
                                  policy == copy_policy::always ? copy_policy::if_needed : policy,
                                  device, transient);
    }
    if (exported) return std::move(*exported);
    if (PyObject_HasAttr(obj.ptr(), dlpack_attr().ptr()) != 1) {
        static PyObject* const cai = PyUnicode_InternFromString("__cuda_array_interface__");
        auto interface = py::reinterpret_steal<py::object>(PyObject_GetAttr(obj.ptr(), cai));
        if (!interface) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
            PyErr_Clear();
            ISTHMUS_THROW(type_error,
                          "from_dlpack: expected an object with __dlpack__ (a NumPy array, a "
                          "torch tensor, a qvalue, ...), with __cuda_array_interface__, or a "
                          "DLPack capsule, got ",
                          type_name(obj));
        }
        return on_device(tensor_from_cuda_array_interface(obj, interface, policy), want, policy);
    }

    // See Note [dlpack streams]: the producer's device decides whether a stream is passed.
    int source = -1;
    static PyObject* const device_attr = PyUnicode_InternFromString("__dlpack_device__");
    if (PyObject_HasAttr(obj.ptr(), device_attr) == 1) {
        const auto [type, id] =
            device_pair(obj.attr("__dlpack_device__")(), "from_dlpack: __dlpack_device__()");
        if (type == dl::kDLCUDA) source = static_cast<int>(id);
    }
    // The keywords for an export to `target` (-1: the CPU); `ask` passes dl_device.
    auto call = [&](int target, bool ask) -> py::object {
        py::dict kwargs, legacy;
        kwargs["max_version"] = py::make_tuple(dl::version_major, dl::version_minor);
        if (policy != copy_policy::if_needed)
            kwargs["copy"] = py::bool_(policy == copy_policy::always);
        if (ask)
            kwargs["dl_device"] =
                py::make_tuple(int{target < 0 ? dl::kDLCPU : dl::kDLCUDA}, target < 0 ? 0 : target);
        if (target >= 0) {
            require_cuda(
                detail::concat("from_dlpack: the producer's data is on CUDA device ", target),
                target);
            const auto s = reinterpret_cast<uintptr_t>(cuda::stream(target));
            kwargs["stream"] = py::int_(s);
            legacy["stream"] = py::int_(s);
        }
        py::object fn = obj.attr("__dlpack__");
        try {
            return fn(**kwargs);
        } catch (py::error_already_set& e) {
            if (!e.matches(PyExc_TypeError)) throw;
            // A producer that predates DLPack 1.0's keywords: a legacy capsule (with the
            // stream, which DLPack 0.x producers such as torch 1.x take).
            return fn(**legacy);
        }
    };
    py::object cap;
    if (want && *want != source) {
        try {
            cap = call(*want, true);
        } catch (py::error_already_set& e) {
            // The producer cannot export to that device (NumPy to CUDA): take the data where it
            // is, and copy it below.
            if (!e.matches(PyExc_BufferError)) throw;
            cap = call(source, false);
        }
    } else {
        cap = call(want.value_or(source), want.has_value());
    }
    return on_device(consume_capsule(cap, policy), want, policy);
}

value value_from_dlpack(py::handle obj, py::handle device, py::handle copy) {
    const copy_policy policy = copy_policy_of(copy, "from_dlpack");
    if (is_qvalue(obj)) { // no capsule needed: the value itself (or a copy)
        const std::optional<int> want = import_device(device);
        const value& v = qvalue_ref(obj);
        if (v.is_scalar() && (!want || *want < 0)) return v; // scalars are immutable
        ISTHMUS_CHECK(v.is_tensor() || v.is_scalar(), type_error,
                      "from_dlpack: only tensor and scalar values hold DLPack data, this value "
                      "is a ",
                      v.kind_name());
        const tensor t = v.is_tensor() ? v.as_tensor() : v.as_scalar().to_tensor();
        if (policy != copy_policy::always) {
            tensor moved = on_device(t, want, policy);
            return moved.storage() == t.storage() && v.is_tensor() ? v : value(moved);
        }
        const int where = want.value_or(cuda_ordinal(t.location()));
        py::gil_scoped_release nogil;
        return value(to_resource(t, where < 0 ? MEMRESOURCE_CPU : cuda_resource(where), true));
    }
    return value(tensor_from_dlpack(obj, policy, device));
}

} // namespace isthmus::boundary
