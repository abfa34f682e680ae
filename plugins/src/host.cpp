// Calling into plugins: functions (overload resolution), object types, and parallel_do.
#include "call_autograd.hpp"
#include "call_context.hpp"
#include "cpu_launch.hpp"

#include "isthmus/cuda.hpp"
#include "isthmus/interrupt.hpp"
#include "isthmus/schedule.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>

namespace isthmus::plugin_host {

using detail::arg_buffer;
using detail::arg_slot;
using detail::call_context;
using detail::fit;

compile_error::compile_error(const std::string& summary, std::string diagnostics)
    : runtime_error(summary + (diagnostics.empty() ? "" : ":\n" + diagnostics)),
      diagnostics_(std::move(diagnostics)) {}
compile_error::~compile_error() = default;
callable_object::~callable_object() = default;

// ---- checked mode (Note [checked mode]) --------------------------------------------------------

namespace {

// -1: no checked_scope on this thread (the environment decides), else the innermost scope's 0/1.
thread_local int t_checked = -1;

struct environment_setting {
    bool on = false;
    std::string bad; // a value ISTHMUS_CHECKED must not have, or empty
};

const environment_setting& environment() {
    static const environment_setting e = [] {
        environment_setting r;
        const char* v = std::getenv("ISTHMUS_CHECKED");
        std::string s = v ? v : "";
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (s == "1" || s == "true" || s == "yes" || s == "on")
            r.on = true;
        else if (!(s.empty() || s == "0" || s == "false" || s == "no" || s == "off"))
            r.bad = v;
        return r;
    }();
    return e;
}

} // namespace

bool checked_by_environment() {
    const environment_setting& e = environment();
    ISTHMUS_CHECK(e.bad.empty(), value_error,
                  "ISTHMUS_CHECKED must be 1 or 0 (or true/false, "
                  "yes/no, on/off), got \"",
                  e.bad, "\"");
    return e.on;
}

bool checked() {
    return t_checked >= 0 ? t_checked != 0 : checked_by_environment();
}

checked_scope::checked_scope(bool on) noexcept : previous_(t_checked) {
    t_checked = on ? 1 : 0;
}

checked_scope::~checked_scope() {
    t_checked = previous_;
}

namespace {
thread_local bool t_deterministic = false;
} // namespace

bool deterministic() {
    return t_deterministic;
}

deterministic_scope::deterministic_scope(bool on) noexcept : previous_(t_deterministic) {
    t_deterministic = on;
}

deterministic_scope::~deterministic_scope() {
    t_deterministic = previous_;
}

namespace detail {
uint32_t call_flags_now() {
    return checked() ? ISTHMUS_CALL_CHECKED : 0u;
}
} // namespace detail

namespace {

// Picks the overload the arguments fit: the first exact fit, else the first that fits with
// conversions. Throws type_error naming what was given and what each overload expects.
const isthmus_function* resolve(const std::vector<const isthmus_function*>& overloads,
                                std::span<const value> args, const std::string& name) {
    const isthmus_function* convertible = nullptr;
    std::string why;
    for (const isthmus_function* f : overloads) {
        if (f->nparams < 0) return f; // variadic: the plugin checks
        if (static_cast<size_t>(f->nparams) != args.size()) {
            if (overloads.size() == 1)
                ISTHMUS_THROW(type_error, f->signature, ": expected ", f->nparams,
                              " argument(s), got ", args.size());
            continue;
        }
        fit worst = fit::exact;
        for (size_t i = 0; i < args.size() && worst != fit::no; ++i) {
            std::string w;
            const fit ft = detail::check_arg(f->params[i], args[i], &w);
            if (ft == fit::no && overloads.size() == 1)
                ISTHMUS_THROW(type_error, f->signature, ": argument ", i + 1, " (",
                              f->params[i].name, "): ", w);
            worst = std::min(worst, ft);
        }
        if (worst == fit::exact) return f;
        if (worst == fit::convert && !convertible) convertible = f;
    }
    if (convertible) return convertible;
    std::ostringstream os;
    os << name << ": no overload accepts (";
    for (size_t i = 0; i < args.size(); ++i) os << (i ? ", " : "") << detail::describe(args[i]);
    os << "); the overloads are:";
    for (const isthmus_function* f : overloads) os << "\n  " << f->signature;
    throw type_error(os.str());
}

// Calls one ABI function with the receiver (methods) and arguments; returns the result value.
value invoke(const isthmus_function* f, const std::shared_ptr<const library>& lib,
             const value* self, std::span<const value> args, const std::string& what) {
    const size_t extra = self ? 1 : 0;
    const size_t n = args.size() + extra;
    if (f->nparams >= 0)
        for (size_t i = 0; i < args.size(); ++i)
            detail::check_range(f->params[i], args[i], what, i);
    arg_buffer<arg_slot> slots(n);
    arg_buffer<isthmus_value> vals(n);
    if (self) detail::marshal(*self, nullptr, slots[0], vals[0], lib);
    for (size_t i = 0; i < args.size(); ++i)
        detail::marshal(args[i], f->nparams >= 0 ? &f->params[i] : nullptr, slots[i + extra],
                        vals[i + extra], lib);
    call_context ctx;
    ctx.flags = detail::call_flags_now();
    isthmus_value result{};
    const int rc = f->impl(f, &ctx.base, vals.data(), static_cast<int32_t>(n), &result);
    if (rc != 0 || ctx.failed()) {
        if (!ctx.failed()) ctx.fail(ISTHMUS_ERR_RUNTIME, "the plugin failed without a message");
        ctx.rethrow(what + ": ");
    }
    return detail::unmarshal(result, ctx, lib);
}

} // namespace

// ---- functions ---------------------------------------------------------------------------------

function::function(std::shared_ptr<const library> lib,
                   std::vector<const isthmus_function*> overloads, bool is_method)
    : lib_(std::move(lib)), overloads_(std::move(overloads)), is_method_(is_method) {
    ISTHMUS_ASSERT(!overloads_.empty());
    name_ = overloads_.front()->name;
    // Note [scalar fast path] (plugin_host.hpp): only a lone overload of numbers qualifies, so the
    // fast path never changes which overload a call picks.
    const isthmus_function* f = overloads_.front();
    bool numbers = overloads_.size() == 1 && !is_method_ && f->nparams >= 0 && f->nparams <= 8;
    for (int32_t i = 0; numbers && i < f->nparams; ++i) {
        const int32_t k = f->params[i].kind;
        numbers = k == ISTHMUS_PARAM_BOOL || k == ISTHMUS_PARAM_INT || k == ISTHMUS_PARAM_FLOAT;
    }
    if (numbers) scalar_ = f;
}

value function::call_abi(const isthmus_function* f, const isthmus_value* args,
                         int32_t nargs) const {
    call_context ctx; // numbers only: no views, so no call flags (Note [checked mode])
    isthmus_value result{};
    const int rc = f->impl(f, &ctx.base, args, nargs, &result);
    if (rc != 0 || ctx.failed()) {
        if (!ctx.failed()) ctx.fail(ISTHMUS_ERR_RUNTIME, "the plugin failed without a message");
        ctx.rethrow(name_ + ": ");
    }
    return detail::unmarshal(result, ctx, lib_);
}
function::~function() = default;

std::string function::signature() const {
    std::string s;
    for (const isthmus_function* f : overloads_)
        s += (s.empty() ? "" : "\n") + std::string(f->signature);
    return s;
}

std::string function::to_string() const {
    return "<function " + signature() + " from plugin " + lib_->name() + ">";
}

value function::call(std::span<const value> args) const {
    ISTHMUS_CHECK(!is_method_, type_error, name_, " is a method; call it on an object");
    const isthmus_function* f = resolve(overloads_, args, name_);
    value r = invoke(f, lib_, nullptr, args, name_);
    detail::record_call(*this, args, r); // See Note [plugin calls in autograd]
    return r;
}

// ---- kernels
// -------------------------------------------------------------------------------------

kernel::kernel(std::shared_ptr<const library> lib, const isthmus_kernel* k)
    : lib_(std::move(lib)), k_(k), name_(k->name) {}
kernel::~kernel() = default;

std::string kernel::to_string() const {
    return "<kernel " + std::string(abi()->signature) + " from plugin " + lib_->name() + ">";
}

// See Note [compile tiers]: one acquire load per call until the optimised build replaced the
// quick one, then the optimised record for good. Libraries are never unloaded (Note [no
// unload]), so a launch that started on the quick record may finish on it.
const isthmus_kernel* kernel::abi() const noexcept {
    if (!followed_.load(std::memory_order_acquire) && lib_->successor() != nullptr) follow();
    return k_.load(std::memory_order_acquire);
}

const std::shared_ptr<const library>& kernel::owner() const noexcept {
    return lib_->successor() != nullptr ? lib_->successor_owner_ : lib_;
}

void kernel::follow() const noexcept {
    const library* next = lib_->successor();
    const isthmus_plugin& d = next->descriptor();
    for (int32_t i = 0; i < d.nkernels; ++i)
        if (name_ == d.kernels[i].name) k_.store(&d.kernels[i], std::memory_order_release);
    followed_.store(true, std::memory_order_release);
}

// Note [parallel_do placement]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The kernel runs where the scheduling rule puts its tensor arguments (isthmus::choose_resource,
// docs/memory-model.md: pinned copies, then where every input is valid, the transfer threshold, a
// device_scope override). Fixed-vector arguments do not count: they are read on the host. Then:
//  - on a CUDA device, when the kernel has a CUDA launcher: every tensor argument is locked on
//    that device, the launcher enqueues the whole range on the device's stream
//    (isthmus::cuda::stream) and returns without waiting; the locks are released at once, which
//    is safe because everything that touches those copies later is queued on the same stream or
//    waits for it (a CPU lock synchronises). The host waits only when it reads.
//  - otherwise on the CPU when the kernel has a CPU launcher: data valid only on a GPU comes back
//    through the coherence model (the CPU lock copies it), results are valid on the CPU.
//  - a kernel with only a CUDA launcher and data away from any GPU runs on the default device
//    when that is a GPU, else on cuda:0 once CUDA is initialised; without CUDA it raises
//    runtime_error saying so.
//
// Note [kernel shape rules]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Which shapes parallel_do checks against dims before running. In general none: a kernel body may
// read any element of any argument (a gather, a stencil, a reduction over a row), may write a
// sub-block or a strided subset of a larger output, and may test its own bounds, so no rule
// relating dims to the arguments' shapes holds for every correct kernel, and a guessed rule would
// refuse correct ones. The sound checks are:
//  - dims: 1 to 4 sizes, the kernel's position rank, none negative, and a product that fits
//    int64 (value_error);
//  - each argument's kind, dtype and rank, and each integer's range (type_error and
//    overflow_error, before anything runs);
//  - what the kernel declares: a tensor parameter flagged ISTHMUS_PARAM_AT_POSITION (in C++,
//    m.kernel(...).at_position({"x", "y"})) is indexed at the position, so it needs at least
//    pos_ndim dimensions and leading sizes of at least dims (it may be larger); otherwise
//    value_error, naming the argument, its shape and dims. Checked when dims is not empty
//    (when some position runs).
// Everything else is caught where it happens: 'checked views always, every view in checked
// mode (Note [checked mode]), so `parallel_do((100, 100), x4x4, y4x4, k)` with undeclared
// unchecked views is an index_error in checked mode, and undefined behaviour otherwise.
//
// Note [parallel_do on the CPU]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The iteration space is flattened in C order and cut into contiguous blocks, several per OpenMP
// thread (dynamic schedule, for uneven bodies); each block is one call of the kernel's launcher,
// which loops over its positions with the body inlined. The host never calls per element. Small
// launches (by the body's measured cost, Note [CPU launch plan]) run on the calling thread. The
// first error cancels the remaining blocks.
namespace {
void launch(const shape_t& dims, std::span<const value> args, const kernel& k);
} // namespace

void parallel_do(const shape_t& dims, std::span<const value> args, const kernel& k) {
    detail::check_launch_writes(args, k); // See Note [plugin calls in autograd]
    launch(dims, args, k);
    detail::record_launch(dims, args, k);
}

namespace {
void launch(const shape_t& dims, std::span<const value> args, const kernel& k) {
    const uint32_t flags = detail::call_flags_now();
    // See Note [the quick build's launcher]: a quick build has no checked loop, its optimised
    // build has.
    if ((flags & ISTHMUS_CALL_CHECKED) && !(k.owner()->features() & ISTHMUS_FEATURE_CHECKED_MODE))
        k.owner()->wait_optimised();
    const isthmus_kernel* ak = k.abi();
    const std::string& nm = k.name();
    ISTHMUS_CHECK(!dims.empty() && dims.size() <= 4, value_error, "parallel_do(", nm,
                  "): dims must have 1 to 4 entries, got ", shape_str(dims));
    ISTHMUS_CHECK(static_cast<int32_t>(dims.size()) == ak->pos_ndim, value_error, "parallel_do(",
                  nm, "): the kernel's position has ", ak->pos_ndim, " dimension(s) but dims ",
                  shape_str(dims), " has ", dims.size());
    for (int64_t d : dims)
        ISTHMUS_CHECK(d >= 0, value_error, "parallel_do(", nm, "): negative size in dims ",
                      shape_str(dims));
    ISTHMUS_CHECK(ak->launch_cpu != nullptr || ak->launch_cuda != nullptr, not_implemented_error,
                  "parallel_do(", nm, "): the kernel has no launcher");
    ISTHMUS_CHECK(static_cast<int32_t>(args.size()) == ak->nparams, type_error, ak->signature,
                  ": parallel_do expected ", ak->nparams, " argument(s) before the kernel, got ",
                  args.size());
    for (size_t i = 0; i < args.size(); ++i) {
        std::string why;
        if (detail::check_arg(ak->params[i], args[i], &why) == fit::no)
            ISTHMUS_THROW(type_error, ak->signature, ": argument ", i + 1, " (", ak->params[i].name,
                          "): ", why);
        detail::check_range(ak->params[i], args[i], ak->signature, i);
    }
    // See Note [kernel shape rules].
    int64_t total = 1;
    for (int64_t d : dims) {
        ISTHMUS_CHECK(d == 0 || total <= INT64_MAX / d, value_error, "parallel_do(", nm, "): dims ",
                      shape_str(dims), " has more than 2^63 - 1 positions");
        total *= d;
    }
    for (size_t i = 0; total > 0 && i < args.size(); ++i) {
        const isthmus_param& p = ak->params[i];
        if (!(p.flags & ISTHMUS_PARAM_AT_POSITION) || !args[i].is_tensor()) continue;
        const shape_t& s = args[i].as_tensor().shape();
        bool covers = s.size() >= dims.size();
        for (size_t d = 0; covers && d < dims.size(); ++d) covers = s[d] >= dims[d];
        ISTHMUS_CHECK(covers, value_error, ak->signature, ": argument ", i + 1, " (", p.name,
                      ") is indexed at the position, so its leading dimensions must cover dims ",
                      shape_str(dims), ", but its shape is ", shape_str(s));
    }
    // See Note [checked mode]: a plugin built without it runs unchecked; say so once per library.
    if ((flags & ISTHMUS_CALL_CHECKED) && !(k.owner()->features() & ISTHMUS_FEATURE_CHECKED_MODE)) {
        static std::mutex mu;
        static std::set<const library*> told;
        std::lock_guard lk(mu);
        if (told.insert(k.owner().get()).second)
            std::cerr << "[isthmus] checked mode: plugin " << k.owner()->name() << " ("
                      << k.owner()->path()
                      << ") was not built with checked-mode support (an older plugin.hpp, or "
                         "the C ABI alone); its kernels run unchecked\n";
    }

    // Where it runs (Note [parallel_do placement]): a CUDA ordinal, or -1 for the CPU.
    int device = -1;
    if (ak->launch_cuda) {
        arg_buffer<const tensor*> inputs(args.size());
        size_t ninputs = 0;
        for (size_t i = 0; i < args.size(); ++i)
            if (args[i].is_tensor() && ak->params[i].kind != ISTHMUS_PARAM_VEC)
                inputs[ninputs++] = &args[i].as_tensor();
        device = detail::cuda_ordinal(
            choose_resource(std::span<const tensor* const>(inputs.data(), ninputs)));
        if (device < 0 && !ak->launch_cpu) {
            if (const int def = detail::cuda_ordinal(default_resource()); def >= 0)
                device = def;
            else if (cuda::initialized())
                device = 0;
            else
                ISTHMUS_THROW(runtime_error, "parallel_do(", nm,
                              "): the kernel runs only on CUDA (it has no CPU launcher) and CUDA "
                              "is not initialised: call init(\"cuda\") first",
                              cuda::available() ? std::string()
                                                : " (CUDA is not available here: " +
                                                      cuda::unavailable_reason() + ")");
        }
    }
    const resource_id where = device >= 0 ? cuda_resource(device) : MEMRESOURCE_CPU;

    arg_buffer<arg_slot> slots(args.size());
    arg_buffer<isthmus_value> vals(args.size());
    for (size_t i = 0; i < args.size(); ++i)
        detail::marshal(args[i], &ak->params[i], slots[i], vals[i], k.owner(), where);

    if (total == 0) return;
    isthmus_range base{};
    base.ndim = static_cast<int32_t>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) base.dims[d] = dims[d];

    call_context ctx;
    ctx.flags = flags;
    const auto n = static_cast<int32_t>(args.size());
    if (device >= 0) {
        isthmus_range r = base;
        r.begin = 0;
        r.end = total;
        if (ak->launch_cuda(ak, &ctx.base, &r, vals.data(), n, device, cuda::stream(device)) != 0 &&
            !ctx.failed())
            ctx.fail(ISTHMUS_ERR_RUNTIME, "the CUDA launcher failed without a message");
        if (ctx.failed()) ctx.rethrow(nm + ": ");
        return;
    }
    // See Note [CPU launch plan].
    interrupt_check ic;
    detail::launch_cpu_blocks(k, ctx, base, total, vals.data(), n, ic);
    if (ctx.failed()) ctx.rethrow(nm + ": ");
    ic.raise_if_stopped(nm.c_str());
}
} // namespace

// ---- objects
// -------------------------------------------------------------------------------------

plugin_object::plugin_object(std::shared_ptr<const library> lib, const isthmus_type* type,
                             void* instance)
    : lib_(std::move(lib)), type_(type), instance_(instance) {}

plugin_object::~plugin_object() {
    if (type_->destroy) type_->destroy(type_, instance_);
}

std::string plugin_object::kind() const {
    return type_->name;
}

std::string plugin_object::to_string() const {
    return "<" + std::string(type_->name) + " object from plugin " + lib_->name() + ">";
}

std::vector<std::string> plugin_object::fields() const {
    std::vector<std::string> r;
    for (int32_t i = 0; i < type_->nfields; ++i) r.emplace_back(type_->fields[i].name);
    return r;
}
std::vector<std::string> plugin_object::methods() const {
    std::vector<std::string> r;
    for (int32_t i = 0; i < type_->nmethods; ++i) {
        std::string n = type_->methods[i].name;
        if (std::find(r.begin(), r.end(), n) == r.end()) r.push_back(n);
    }
    return r;
}
std::vector<std::string> plugin_object::events() const {
    std::vector<std::string> r;
    for (int32_t i = 0; i < type_->nevents; ++i) r.emplace_back(type_->events[i].name);
    return r;
}
bool plugin_object::has_field(const std::string& n) const {
    for (int32_t i = 0; i < type_->nfields; ++i)
        if (n == type_->fields[i].name) return true;
    return false;
}
bool plugin_object::has_method(const std::string& n) const {
    for (int32_t i = 0; i < type_->nmethods; ++i)
        if (n == type_->methods[i].name) return true;
    return false;
}
bool plugin_object::has_event(const std::string& n) const {
    for (int32_t i = 0; i < type_->nevents; ++i)
        if (n == type_->events[i].name) return true;
    return false;
}

namespace {
std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? "none" : s;
}
} // namespace

value plugin_object::get(const std::string& name) const {
    for (int32_t i = 0; i < type_->nfields; ++i) {
        const isthmus_field& f = type_->fields[i];
        if (name != f.name) continue;
        call_context ctx;
        isthmus_value r{};
        if (f.get(&f, &ctx.base, instance_, &r) != 0 || ctx.failed()) ctx.rethrow(name + ": ");
        return detail::unmarshal(r, ctx, lib_);
    }
    ISTHMUS_THROW(value_error, type_->name, " has no field \"", name,
                  "\" (fields: ", joined(fields()), ")");
}

void plugin_object::set(const std::string& name, const value& v) const {
    for (int32_t i = 0; i < type_->nfields; ++i) {
        const isthmus_field& f = type_->fields[i];
        if (name != f.name) continue;
        ISTHMUS_CHECK(f.set != nullptr, value_error, type_->name, ".", name, " is read-only");
        arg_slot slot;
        isthmus_value av{};
        detail::marshal(v, nullptr, slot, av, lib_);
        call_context ctx;
        if (f.set(&f, &ctx.base, instance_, &av) != 0 || ctx.failed())
            ctx.rethrow(std::string(type_->name) + "." + name + ": ");
        return;
    }
    ISTHMUS_THROW(value_error, type_->name, " has no field \"", name,
                  "\" (fields: ", joined(fields()), ")");
}

value plugin_object::call(const std::string& method, std::span<const value> args) const {
    std::vector<const isthmus_function*> overloads;
    for (int32_t i = 0; i < type_->nmethods; ++i)
        if (method == type_->methods[i].name) overloads.push_back(&type_->methods[i]);
    ISTHMUS_CHECK(!overloads.empty(), value_error, type_->name, " has no method \"", method,
                  "\" (methods: ", joined(methods()), ")");
    const std::string what = std::string(type_->name) + "." + method;
    const isthmus_function* f = resolve(overloads, args, what);
    const value self(std::static_pointer_cast<object>(
        std::const_pointer_cast<plugin_object>(shared_from_this())));
    return invoke(f, lib_, &self, args, what);
}

const isthmus_event& plugin_object::find_event(const std::string& name) const {
    for (int32_t i = 0; i < type_->nevents; ++i)
        if (name == type_->events[i].name) return type_->events[i];
    ISTHMUS_THROW(value_error, type_->name, " has no event \"", name,
                  "\" (events: ", joined(events()), ")");
}

void plugin_object::add_listener(const std::string& event, host_callable fn, std::string) const {
    const isthmus_event& e = find_event(event);
    call_context ctx;
    if (e.add(&e, &ctx.base, instance_, detail::make_callback(std::move(fn), lib_)) != 0 ||
        ctx.failed())
        ctx.rethrow(event + ".add: ");
}

void plugin_object::clear_listeners(const std::string& event) const {
    const isthmus_event& e = find_event(event);
    call_context ctx;
    if (e.clear(&e, &ctx.base, instance_) != 0 || ctx.failed()) ctx.rethrow(event + ".clear: ");
}

int64_t plugin_object::listener_count(const std::string& event) const {
    const isthmus_event& e = find_event(event);
    return e.count ? e.count(&e, instance_) : 0;
}

} // namespace isthmus::plugin_host
