# Bad input to plugin ops and plugin results: tensors on two devices (meta beside CPU), eager
# results that break the fake rule's promise, schemas and differentiable= that cannot work, and
# plugins handing the host malformed tuples (Note [tuple results in the ABI] in plugin_abi.h).
# Each refusal is a typed error with a clear message; nothing is registered, nothing written,
# and the process keeps working.
import numpy as np
import pytest

import isthmus as q

torch = pytest.importorskip("torch")

SRC = r"""
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
namespace ip = isthmus::plugin;

// y(m, n) = a[x(m, n)] (clamped): a float-only plugin, whose read-only views convert other dtypes
static ip::tensor<float, 2> gather(ip::view<const float, 1, ip::access::clamped> a,
                                   ip::view<const float, 2> x) {
    ip::tensor<float, 2> y({x.size(0), x.size(1)});
    for (int64_t m = 0; m < x.size(0); ++m)
        for (int64_t n = 0; n < x.size(1); ++n) y(m, n) = a(static_cast<int64_t>(x(m, n)));
    return y;
}

static ip::tensor<float, 1> scaled(ip::view<const float, 1> x, double s) {
    ip::tensor<float, 1> y({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) y(i) = static_cast<float>(x(i) * s);
    return y;
}

// ---- malformed tuples, made with the raw ABI ----

static isthmus_value host_tuple(int64_t n) {
    isthmus_call* c = ip::current_call();
    isthmus_value v{};
    if (c->host->new_tuple(c, n, &v) != 0) throw ip::error("new_tuple failed");
    return v;
}

static isthmus_value number(double x) {
    isthmus_value v{};
    v.kind = ISTHMUS_VALUE_FLOAT, v.dtype = ISTHMUS_DT_FLOAT64, v.u.f = x;
    return v;
}

static isthmus_value nested(int64_t depth) {
    isthmus_value outer = host_tuple(1);
    isthmus_value* at = &outer.u.tup.items[0];
    for (int64_t d = 1; d < depth; ++d) {
        isthmus_value inner = host_tuple(1);
        *at = inner;
        at = &inner.u.tup.items[0];
    }
    *at = number(1.0);
    return outer;
}

// The author layer in a host whose table predates new_tuple: NULL slot, or a shorter table.
static std::string older_host(bool shorter) {
    isthmus_call* c = ip::current_call();
    isthmus_host old = *c->host;
    if (shorter)
        old.struct_size = static_cast<uint32_t>(offsetof(isthmus_host, new_tuple));
    else
        old.new_tuple = nullptr;
    isthmus_call call{&old, c->ctx};
    ip::detail::call_scope scope(&call);
    try {
        (void)ip::detail::result_to_abi(std::make_tuple(1.0, 2.0));
        return "no error";
    } catch (const ip::error& e) {
        return e.what();
    }
}

ISTHMUS_PLUGIN(thostile, m) {
    m.def("th_gather", &gather, {"a", "x"});
    m.def("th_scaled", &scaled, {"x", "s"});
    m.kernel("th_add", [](ip::view<const float, 1> x, ip::view<float, 1> y, float v, int64_t i) {
        y(i) = x(i) + v;
    }, {"x", "y", "v"});
    m.def("th_foreign_items", []() {
        static isthmus_value items[2] = {number(1.0), number(2.0)};
        isthmus_value v{};
        v.kind = ISTHMUS_VALUE_TUPLE, v.dtype = ISTHMUS_DT_ANY;
        v.u.tup.items = items, v.u.tup.size = 2;
        return v;
    });
    m.def("th_holds_itself", []() {
        isthmus_value v = host_tuple(1);
        v.u.tup.items[0] = v;
        return v;
    });
    m.def("th_twice", []() {
        isthmus_value inner = host_tuple(1), v = host_tuple(2);
        inner.u.tup.items[0] = number(3.0);
        v.u.tup.items[0] = inner, v.u.tup.items[1] = inner;
        return v;
    });
    m.def("th_size_lie", []() {
        isthmus_value v = host_tuple(2);
        v.u.tup.size = 5;
        return v;
    });
    m.def("th_tuple_of", [](int64_t n) { return host_tuple(n); }, {"n"});
    m.def("th_nested", &nested, {"depth"});
    m.def("th_unknown_item", []() {
        isthmus_value v = host_tuple(2);
        v.u.tup.items[0] = ip::tensor<float, 1>({3}).raw();
        v.u.tup.items[1].kind = 77;
        return v;
    });
    m.def("th_tuple_to_python", []() {
        isthmus_call* c = ip::current_call();
        isthmus_value t = host_tuple(1), r{};
        if (c->host->call_python(c, "builtins.len", &t, 1, &r) != 0)
            throw ip::error("call_python failed");
        return r;
    });
    m.def("th_older_host", &older_host, {"shorter"});
}
"""


@pytest.fixture(scope="module")
def plugin():
    q.init("cpu")
    return q.compile_string("thostile", SRC)


@pytest.fixture(scope="module")
def gather(plugin):
    return q.torch.custom_op(q.th_gather, fake="x")


# ---- B: devices ----

def test_meta_beside_cpu_is_refused_as_torchs_ops_refuse_it(gather):
    with pytest.raises(RuntimeError):  # torch's own op
        torch.add(torch.randn(4, device="meta"), torch.zeros(4))
    with pytest.raises(RuntimeError, match="one device.*meta.*cpu"):
        gather(torch.randn(256, device="meta"), torch.zeros(2, 4))
    with pytest.raises(RuntimeError, match="one device.*cpu.*meta"):
        gather(torch.randn(256), torch.zeros(2, 4, device="meta"))


def test_meta_tensors_alone_get_the_fake_rules_meta_result(gather):
    y = gather(torch.randn(256, device="meta"), torch.zeros(2, 4, device="meta"))
    assert y.device.type == "meta" and y.shape == (2, 4) and y.dtype == torch.float32
    y = gather(torch.tensor(1.0), torch.zeros(3, 5, device="meta"))  # a 0-d CPU tensor goes along
    assert y.device.type == "meta" and y.shape == (3, 5)


def test_kernel_ops_check_devices_too(plugin):
    add = q.torch.kernel_op(q.th_add)
    x, y = torch.ones(4), torch.zeros(4)
    add([4], x, y, 2.0)
    assert (y == 3.0).all()
    with pytest.raises(RuntimeError, match="one device.*meta.*cpu"):
        add([4], torch.ones(4, device="meta"), y, 5.0)
    assert (y == 3.0).all()  # nothing ran, nothing written
    add([4], torch.ones(4, device="meta"), torch.empty(4, device="meta"), 1.0)  # the fake


# ---- C: dtypes the fake rule promises ----

def test_an_eager_result_of_another_dtype_than_fake_x_is_refused(gather):
    a = torch.randn(256)
    x = torch.zeros(2, 4, dtype=torch.int32)
    with pytest.raises(TypeError, match="float32 where fake='x' .* promises int32"):
        gather(a, x)
    with torch._subclasses.fake_tensor.FakeTensorMode():  # what compile traces: int32, as said
        assert gather(torch.empty(256), torch.empty(2, 4, dtype=torch.int32)).dtype == torch.int32
    y = gather(a, x.float())  # the dtype the plugin computes in: as promised
    assert y.dtype == torch.float32 and y.shape == (2, 4)


def test_a_fake_function_is_held_to_its_dtype_and_fake_x_to_its_shape(plugin):
    wide = q.torch.custom_op(q.th_scaled, name="th_scaled_wide",
                             fake=lambda x, s: x.new_empty(x.shape, dtype=torch.float64))
    with pytest.raises(TypeError, match="float32 where its fake rule promises float64"):
        wide(torch.ones(3), 2.0)
    with pytest.raises(TypeError, match="float32 where its fake rule promises float64"):
        wide(torch.ones(3), 2.0)  # cached promise, same answer
    shaped = q.torch.custom_op(q.th_gather, name="th_gather_like_a", fake="a")
    with pytest.raises(ValueError, match=r"shape \(2, 4\) where fake='a' promises a's shape"):
        shaped(torch.randn(256), torch.zeros(2, 4))
    good = q.torch.custom_op(q.th_scaled, name="th_scaled_good",
                             fake=lambda x, s: torch.empty_like(x))
    np.testing.assert_allclose(good(torch.ones(3), 2.0).numpy(), [2.0, 2.0, 2.0])
    torch.library.opcheck(good, (torch.ones(3), 2.0))


# ---- D: schemas ----

BAD_SCHEMAS = [
    ("garbage", "does not start with '\\('"),
    ("", "does not start with '\\('"),
    ("th_gather(Tensor a, Tensor x) -> Tensor", "starts with the name 'th_gather'"),
    ("(Tensor a, Tensor x -> Tensor", "parentheses do not match"),
    ("(Tensor a, Tensor x)", "'->' and the result must follow"),
    ("(Tensor a, Tensor x) Tensor", "'->' and the result must follow"),
    ("(Tensor a, float s=1.0) -> Tensor", "default value"),
    ("(Tensor a, *, Tensor x) -> Tensor", "keyword-only"),
    ("(Tensor a, ScalarType x) -> Tensor", "type 'ScalarType'"),
    ("(Tensor[] a, Tensor x) -> Tensor", "list of tensors"),
    ("(Tensor a, Tensor) -> Tensor", "not '<type> <name>'"),
    ("(Tensor a, , Tensor x) -> Tensor", "empty argument"),
    ("(Tensor a, Tensor a) -> Tensor", "named twice"),
    ("(Tensor a, Tensor x) -> int", "result 'int' is not a Tensor"),
    ("(Tensor a, Tensor x) -> Tensor(a)", "not a Tensor"),
    ("(Tensor a, Tensor x) -> (Tensor, float)", "result 'float' is not a Tensor"),
    ("(int(a!) a, Tensor x) -> Tensor", "only a Tensor has an alias"),
]


@pytest.mark.parametrize("schema, message", BAD_SCHEMAS)
def test_schemas_that_cannot_work_are_refused_clearly(plugin, schema, message):
    with pytest.raises(ValueError, match=message):
        q.torch.custom_op(q.th_gather, name="th_bad_schema", fake="x", schema=schema)
    assert not hasattr(torch.ops.thostile, "th_bad_schema")


def test_a_schema_must_be_a_string(plugin):
    with pytest.raises(TypeError, match="schema= takes a string"):
        q.torch.custom_op(q.th_gather, name="th_bad_schema", fake="x", schema=5)


def test_written_arguments_in_a_schema_are_read_as_torch_reads_them(plugin):
    op = q.torch.custom_op(q.th_gather, name="th_gather_written", fake="x",
                           schema="(Tensor(a!) a, Tensor x) -> Tensor")
    schema = torch.ops.thostile.th_gather_written.default._schema
    assert [a.name for a in schema.arguments] == ["a", "x"]
    assert schema.arguments[0].alias_info.is_write and schema.arguments[1].alias_info is None
    a = torch.randn(256)
    np.testing.assert_array_equal(op(a, torch.zeros(2, 2)).numpy(), np.full((2, 2), a[0].item()))
    several = q.torch.custom_op(q.th_gather, name="th_gather_tuple_schema", fake=lambda a, x: x,
                                schema="( Tensor a , Tensor x ) -> ( Tensor )")
    assert several(a, torch.zeros(1, 1)).shape == (1, 1)


def test_kernel_op_schemas(plugin):
    with pytest.raises(ValueError, match="starts with the launch shape"):
        q.torch.kernel_op(q.th_add, name="th_add_bad",
                          schema="(Tensor x, Tensor(a!) y, float v) -> ()")
    with pytest.raises(ValueError, match="returns nothing"):
        q.torch.kernel_op(q.th_add, name="th_add_bad",
                          schema="(int[] dims, Tensor x, Tensor(a!) y, float v) -> Tensor")
    with pytest.raises(ValueError, match="does not start"):
        q.torch.kernel_op(q.th_add, name="th_add_bad", schema="add")
    assert not hasattr(torch.ops.thostile, "th_add_bad")
    add = q.torch.kernel_op(q.th_add, name="th_add_own",
                            schema="(int[] dims, Tensor x, Tensor(b!) y, float v) -> ()")
    y = torch.zeros(3)
    add([3], torch.ones(3), y, 2.0)
    assert (y == 3.0).all()


# ---- D: fake=, backward=, differentiable= of custom_op ----

@pytest.mark.parametrize("kwargs, error, message", [
    ({"fake": 5}, TypeError, "fake= takes a function"),
    ({"fake": ("x", "x")}, ValueError, r"describes 2 result\(s\), the op returns 1"),
    ({"fake": "s"}, ValueError, "names a float parameter"),
    ({"fake": "x", "backward": 3}, TypeError, "backward= takes a plugin function or a Python"),
    ({"fake": "x", "backward": np.sum, "differentiable": ("s",)}, ValueError,
     "only Tensor parameters have gradients"),
    ({"fake": "x", "backward": np.sum, "differentiable": (7,)}, ValueError,
     "position 7 is out of range"),
    ({"fake": "x", "backward": np.sum, "differentiable": (1.5,)}, TypeError,
     r"names \(str\) or positions \(int\), got 1.5"),
    ({"fake": "x", "backward": np.sum, "differentiable": (True,)}, TypeError,
     r"names \(str\) or positions \(int\), got True"),
    ({"fake": "x", "backward": np.sum, "differentiable": ("x", 0)}, ValueError, "twice"),
    ({"fake": "x", "backward": np.sum, "differentiable": ()}, ValueError, "names no parameter"),
])
def test_custom_op_arguments_are_checked_before_registering(plugin, kwargs, error, message):
    with pytest.raises(error, match=message):
        q.torch.custom_op(q.th_scaled, name="th_scaled_refused", **kwargs)
    assert not hasattr(torch.ops.thostile, "th_scaled_refused")
    assert not hasattr(torch.ops.thostile, "th_scaled_refused_backward")


# ---- D: q.autograd.function ----

@pytest.mark.parametrize("differentiable, error, message", [
    ((5,), ValueError, r"position 5 is out of range: 2 parameters \['x', 's'\]"),
    (("a",), ValueError, r"names 'a', not a parameter \(\['x', 's'\]\)"),
    ((1.5,), TypeError, r"names \(str\) or positions \(int\)"),
    ((True,), TypeError, r"names \(str\) or positions \(int\)"),
    ((-1,), ValueError, "position -1 is out of range"),
    ((), ValueError, "names no parameter"),
    ((0, "x"), ValueError, "position 0 twice"),
])
def test_autograd_function_checks_differentiable_when_defined(plugin, differentiable, error,
                                                              message):
    with pytest.raises(error, match=message):
        q.autograd.function(q.th_scaled, q.th_scaled, differentiable=differentiable)


def test_autograd_function_call_time_checks(plugin):
    Scaled = q.autograd.function(q.th_scaled, lambda x, s, g: g * s, differentiable=("x",))
    x = torch.ones(3, requires_grad=True)
    Scaled.apply(x, 2.0).sum().backward()
    assert (x.grad == 2.0).all()
    with pytest.raises(TypeError, match=r"at least one torch tensor argument.*\(float, float\)"):
        Scaled.apply(1.0, 2.0)
    Loose = q.autograd.function(lambda *a: q.th_scaled(*a), lambda *a: a[-1],
                                differentiable=(5,))  # variadic: checked at apply
    with pytest.raises(ValueError, match=r"names input 5, but 2 input\(s\) were given"):
        Loose.apply(x, 2.0)
    Named = q.autograd.function(lambda *a: q.th_scaled(*a), lambda *a: a[-1],
                                differentiable=(0,))
    assert Named.apply(x, 3.0).shape == (3,)
    with pytest.raises(TypeError, match="parameter names are unknown"):
        q.autograd.function(lambda *a: a, lambda *a: a, differentiable=("x",))
    with pytest.raises(TypeError, match="backward must be"):
        q.autograd.function(q.th_scaled, 42)
    with pytest.raises(TypeError, match="th_scaled has no derived backward"):
        q.autograd.function(q.th_scaled, None)  # None: derive it, which concrete code cannot


# ---- malformed tuples from plugins ----

@pytest.mark.parametrize("fn, error, message", [
    ("th_foreign_items", RuntimeError, "a tuple the host did not allocate"),
    ("th_size_lie", RuntimeError, "a tuple the host did not allocate"),
    ("th_holds_itself", RuntimeError, "same tuple twice in one result"),
    ("th_twice", RuntimeError, "same tuple twice in one result"),
    ("th_unknown_item", RuntimeError, "unknown kind 77"),
    ("th_tuple_to_python", TypeError, "must be a number, a string, None or a tensor"),
])
def test_malformed_tuples_are_refused(plugin, fn, error, message):
    with pytest.raises(error, match=message):
        getattr(q, fn)()
    assert q.th_scaled(np.ones(2, dtype=np.float32), 2.0).to_py().tolist() == [2.0, 2.0]


def test_tuple_sizes_and_depth(plugin):
    assert q.th_tuple_of(0) == ()
    assert q.th_tuple_of(3) == (None, None, None)
    for n in (-1, 65537, 1 << 40):
        with pytest.raises(ValueError, match=r"new_tuple: size .* outside \[0, 65536\]"):
            q.th_tuple_of(n)
    deepest = q.th_nested(64)
    for _ in range(64):
        (deepest,) = deepest
    assert deepest == 1.0
    with pytest.raises(ValueError, match="nested more than 64 deep"):
        q.th_nested(65)


def test_a_host_without_the_new_tuple_slot_gives_a_clear_error(plugin):
    for shorter in (False, True):
        message = q.th_older_host(shorter)
        assert "cannot take several results" in message and "new_tuple" in message
