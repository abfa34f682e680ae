// Test plugin: functions, overloads, kernels with access modifiers, and an object type with an
// event, exercised by tests/plugins_cpp and tests/python/plugins/test_plugins.py.
#include <isthmus/plugin.hpp>

#include <cmath>
#include <string>

namespace ip = isthmus::plugin;

namespace {

// The author layer's compile-time choices: parameter lists of basic types are described by a
// constant table (Note [constant parameter tables]), lists with a full-layer type at load time;
// lambdas without captures share one object (Note [stateless callables]), others are copied.
using basic_params = std::tuple<ip::view<const float, 2>, ip::view<double, 1>, double, int32_t,
                                bool, ip::vec3, isthmus_tensor, isthmus_value, ip::ivec2>;
static_assert(ip::detail::param_table<basic_params>::constant);
constexpr const isthmus_param* basic_table = ip::detail::constant_params<basic_params>::value;
static_assert(basic_table[0].kind == ISTHMUS_PARAM_TENSOR && basic_table[0].ndim == 2 &&
              basic_table[0].dtype == ISTHMUS_DT_FLOAT32 &&
              basic_table[0].flags == ISTHMUS_PARAM_READ);
static_assert(basic_table[1].flags == (ISTHMUS_PARAM_READ | ISTHMUS_PARAM_WRITE) &&
              basic_table[1].dtype == ISTHMUS_DT_FLOAT64);
static_assert(basic_table[3].kind == ISTHMUS_PARAM_INT && basic_table[3].dtype == ISTHMUS_DT_INT32);
static_assert(basic_table[4].kind == ISTHMUS_PARAM_BOOL && basic_table[5].vec_len == 3);
static_assert(basic_table[6].kind == ISTHMUS_PARAM_TENSOR &&
              basic_table[7].kind == ISTHMUS_PARAM_ANY);
static_assert(!ip::detail::param_table<std::tuple<double, std::string>>::constant);
static_assert(ip::detail::param_table<std::tuple<>>::constant);
constexpr auto no_captures = [](double x) { return x; };
static_assert(ip::detail::stateless<decltype(no_captures)>);
inline double captured = 0;
static_assert(!ip::detail::stateless<decltype([c = captured](double x) { return x + c; })>);
static_assert(!ip::detail::stateless<decltype([&c = captured](double x) { return x + c; })>);

// An event source: a counter whose tick() fires `ontick` with the new count.
struct counter {
    explicit counter(std::string label) : label(std::move(label)) {}
    std::string label;
    int64_t count = 0;
    double step = 1.0;
    ip::event<int64_t, std::string> ontick;
    int64_t tick() {
        ++count;
        ontick.fire(count, label);
        return count;
    }
    std::string describe() const { return label + ":" + std::to_string(count); }
};

template <typename T>
ip::tensor<T, 1> scaled(ip::view<const T, 1> x, T s) {
    ip::tensor<T, 1> y({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) y(i) = s * x(i);
    return y;
}

// Written once over the element type; its backward and forward mode are derived (Note [derived
// backward]).
template <typename T>
ip::tensor<T, 1> damped(ip::view<const T, 1> x, T s) {
    ip::tensor<T, 1> y({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) y(i) = exp(-s * x(i)) * x(i);
    return y;
}

// A generic kernel: y[i] = x[i] * x[i + 1] (clamped); its derived kernels are ripple_vjp and
// ripple_jvp.
template <typename T>
struct ripple {
    void operator()(ip::view<const T, 1, ip::access::clamped> x, ip::view<T, 1> y,
                    int64_t i) const {
        y(i) = x(i) * x(i + 1);
    }
};

} // namespace

ISTHMUS_PLUGIN(good_plugin, m) {
    // with_jvp: their forward modes too (damped_jvp, ripple_jvp; Note [derived forward mode])
    m.def("damped", ip::generic<float, double>(ISTHMUS_GENERIC(damped), ip::with_jvp), {"x", "s"});
    m.kernel("ripple", ip::generic<double>([]<typename T>() { return ripple<T>{}; }, ip::with_jvp),
             {"x", "y"});
    m.type<counter>("counter", "A counter that fires ontick(count, label) on every tick.")
        .ctor<std::string>({"label"})
        .field("label", &counter::label)
        .field("count", &counter::count)
        .field("step", &counter::step)
        .method("tick", &counter::tick)
        .method("describe", &counter::describe)
        .event("ontick", &counter::ontick);
    m.def(
        "plus", [](double a, double b) { return a + b; }, {"a", "b"}, "a + b");
    m.def("iadd", [](int64_t a, int64_t b) { return a + b; }, {"a", "b"});
    m.def("greet", [](std::string who) { return "hello " + who; }, {"who"});
    m.def("nothing", [] {});
    m.def("fail_value", [](std::string msg) -> double { throw ip::value_error(msg); }, {"msg"});
    m.def("fail_std", []() -> double { throw std::runtime_error("std failure"); });
    m.def("total",
          [](ip::view<const double, 2> x) {
              double s = 0;
              for (int64_t i = 0; i < x.size(0); ++i)
                  for (int64_t j = 0; j < x.size(1); ++j) s += x(i, j);
              return s;
          },
          {"x"});
    m.def("scaled", &scaled<float>, {"x", "s"});
    m.def("scaled", &scaled<double>, {"x", "s"});
    m.def("norm3", [](ip::dvec3 v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); },
          {"v"});
    m.def("fill_inplace",
          [](ip::view<double, 1> y, double v) {
              for (int64_t i = 0; i < y.size(0); ++i) y(i) = v;
          },
          {"y", "v"});
    m.def("count_of", [](std::shared_ptr<counter> c) { return c->count; }, {"c"});
    m.def("call_twice",
          [](ip::callback cb) {
              isthmus_value args[1];
              args[0] = ip::detail::to_abi<int64_t>(7);
              isthmus_value r{};
              cb.invoke(args, 1, &r);
              cb.invoke(args, 1, &r);
              return r.kind == ISTHMUS_VALUE_FLOAT ? r.u.f : static_cast<double>(r.u.i);
          },
          {"cb"});

    // Plugin -> Python through the host's call_python slot and through callback::call.
    m.def(
        "py_hypot", [](double a, double b) { return ip::call_python<double>("math.hypot", a, b); },
        {"a", "b"}, "math.hypot(a, b), called through the host");
    m.def(
        "py_reduce",
        [](std::string name, ip::view<const double, 1> x) {
            return ip::call_python<double>(name.c_str(), x);
        },
        {"name", "x"}, "name(x) for a qualified Python function name, e.g. numpy.sum");
    m.def("py_upper",
          [](std::string s) { return ip::call_python<std::string>("builtins.str.upper", s); },
          {"s"});
    m.def("py_cumsum",
          [](ip::view<const double, 1> x) {
              // A tensor result from Python: a read-only view valid until this call returns.
              auto c = ip::call_python<ip::view<const double, 1>>("numpy.cumsum", x);
              ip::tensor<double, 1> out({c.size(0)});
              for (int64_t i = 0; i < c.size(0); ++i) out(i) = c(i);
              return out;
          },
          {"x"});
    m.def(
        "py_apply", [](ip::callback f, double x) { return f.call<double>(x, int64_t{2}); },
        {"f", "x"}, "f(x, 2), a Python callable passed as an argument");
    m.def("py_apply_name",
          [](std::string name, ip::callback f) {
              // A named function that itself gets a Python callable: sorted-style key calls.
              return ip::call_python<double>(name.c_str(), f.call<double>(1.5));
          },
          {"name", "f"});
    m.kernel("py_hypot_kernel",
             [](ip::view<const double, 1> x, ip::view<double, 1> y, int64_t i) {
                 y(i) = ip::call_python<double>("math.hypot", x(i), 1.0);
             },
             {"x", "y"});

    // y = a * x + b elementwise over a 2-d space; x and y are indexed at the position, which the
    // kernel declares (parallel_do checks their shapes against dims before running).
    m.kernel("axpb",
             [](ip::view<const double, 2> x, ip::view<double, 2> y, double a, double b,
                ip::ivec2 p) { y(p[0], p[1]) = a * x(p[0], p[1]) + b; },
             {"x", "y", "a", "b"})
        .at_position({"x", "y"});
    // The same body without the declaration: only checked mode catches a dims / shape mismatch.
    m.kernel("axpb_free",
             [](ip::view<const double, 2> x, ip::view<double, 2> y, double a, double b,
                ip::ivec2 p) { y[p] = a * x[p] + b; },
             {"x", "y", "a", "b"});
    // y[i, j] = x[i, j] + x[i, j + 1] + x[i, j + 2] through load / store with unchecked views:
    // dims (H, W - 2) over an H x W image is right; in checked mode dims (H, W) fails at j + 2.
    m.kernel("row_sum3",
             [](ip::view<const float, 2> x, ip::view<float, 2> y, ip::ivec2 p) {
                 const ip::vec3 v = x.load<3>(p[0], p[1]);
                 y.store(ip::vec<float, 1>{{v[0] + v[1] + v[2]}}, p[0], p[1]);
             },
             {"x", "y"});
    // Every integer width, bool and the real types, returned as given (Note [integer parameters]).
    m.def("echo_i8", [](int8_t v) { return v; }, {"v"});
    m.def("echo_i16", [](int16_t v) { return v; }, {"v"});
    m.def("echo_i32", [](int32_t v) { return v; }, {"v"});
    m.def("echo_i64", [](int64_t v) { return v; }, {"v"});
    m.def("echo_u8", [](uint8_t v) { return v; }, {"v"});
    m.def("echo_u16", [](uint16_t v) { return v; }, {"v"});
    m.def("echo_u32", [](uint32_t v) { return v; }, {"v"});
    m.def("echo_u64", [](uint64_t v) { return v; }, {"v"});
    m.def("echo_bool", [](bool v) { return v; }, {"v"});
    m.def("echo_f32", [](float v) { return v; }, {"v"});
    m.def("echo_f64", [](double v) { return v; }, {"v"});
    m.def("echo_c64", [](std::complex<float> v) { return v; }, {"v"});
    m.def(
        "i8_and_tensor", [](int8_t k, ip::view<const double, 1> x) { return k + x.size(0); },
        {"k", "x"}, "Not on the scalar fast path: an int8 next to a tensor.");
    // Sums x[0..n) with an unchecked view (checked mode: n past the end fails).
    m.def("sum_prefix",
          [](ip::view<const double, 1> x, int64_t n) {
              double s = 0;
              for (int64_t i = 0; i < n; ++i) s += x(i);
              return s;
          },
          {"x", "n"});
    // y[i] = v, with an int32 value (a kernel's integer argument is range-checked too).
    m.kernel("fill_i32", [](ip::view<int32_t, 1> y, int32_t v, int64_t i) { y(i) = v; }, {"y", "v"})
        .at_position({"y"});
    // 1-d shifts read with each access modifier: y[i] = x[i + shift].
    m.kernel("shift_clamped",
             [](ip::view<const double, 1, ip::access::clamped> x, ip::view<double, 1> y, int64_t s,
                int64_t i) { y(i) = x(i + s); },
             {"x", "y", "shift"});
    m.kernel("shift_circular",
             [](ip::view<const double, 1, ip::access::circular> x, ip::view<double, 1> y, int64_t s,
                int64_t i) { y(i) = x(i + s); },
             {"x", "y", "shift"});
    m.kernel("shift_mirror",
             [](ip::view<const double, 1, ip::access::mirror> x, ip::view<double, 1> y, int64_t s,
                int64_t i) { y(i) = x(i + s); },
             {"x", "y", "shift"});
    // The same, declaring that x is read within 13 of the position (Note [stencil interiors]).
    m.kernel("shift_mirror_stencil",
             [](ip::view<const double, 1, ip::access::mirror> x, ip::view<double, 1> y, int64_t s,
                int64_t i) { y(i) = x(i + s); },
             {"x", "y", "shift"})
        .stencil({"x"}, 13);
    m.kernel("shift_checked",
             [](ip::view<const double, 1, ip::access::checked> x, ip::view<double, 1> y, int64_t s,
                int64_t i) { y(i) = x(i + s); },
             {"x", "y", "shift"});
    // 3-d: out[i, j, k] = i * 10000 + j * 100 + k (checks position order and strides).
    m.kernel("index3",
             [](ip::view<int64_t, 3> out, ip::ivec3 p) {
                 out(p[0], p[1], p[2]) = p[0] * 10000 + p[1] * 100 + p[2];
             },
             {"out"});
}
