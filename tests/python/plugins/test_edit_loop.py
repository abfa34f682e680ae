"""The edit loop (Note [the edit loop]): compiling a changed source under the same plugin name
replaces that plugin's names on `isthmus`, while objects of the old version keep working; and
the mistakes compile_string refuses (a plugin name that differs from the source's, a parameter
name list of the wrong length)."""
import gc

import numpy as np
import pytest

import isthmus as q

TEMPLATE = """
namespace ip = isthmus::plugin;
struct el_box {
    int64_t version() const { return VERSION; }
};
static ip::tensor<double, 1> el_scaled(ip::view<const double, 1> x) {
    ip::tensor<double, 1> y({x.size(0)});
    for (int64_t i = 0; i < x.size(0); ++i) y(i) = FACTOR * x(i);
    return y;
}
ISTHMUS_PLUGIN(el_mod, m) {
    m.def("el_version", [] { return int64_t{VERSION}; });
    m.def("el_scaled", &el_scaled, {"x"});
    m.kernel("el_fill", [](ip::view<double, 1> y, int64_t i) { y(i) = VERSION; }, {"y"});
    m.type<el_box>("el_box").ctor().method("version", &el_box::version);
    m.def("el_make_box", [] { return std::make_shared<el_box>(); });
    EXTRA
}
"""


def source(version, factor, extra=""):
    return (TEMPLATE.replace("VERSION", str(version)).replace("FACTOR", f"{factor}.0")
            .replace("EXTRA", extra))


@pytest.fixture(scope="module")
def cache(worker_cache):
    with worker_cache("edit_loop"):
        yield


def test_three_edits_replace_the_plugin(cache):
    v1 = q.compile_string("el_mod", source(1, 2))
    assert q.el_version() == 1
    old_fn = q.el_scaled
    old_box = q.el_make_box()  # a native object of version 1
    x = np.arange(4.0)
    np.testing.assert_array_equal(np.asarray(q.el_scaled(x)), 2 * x)
    kept_value = q.el_scaled(x)  # a value the old version made

    v2 = q.compile_string("el_mod", source(2, 3, 'm.def("el_extra", [] { return 7.0; });'))
    assert v2 is not v1
    assert q.el_version() == 2 and q.el_extra() == 7.0
    np.testing.assert_array_equal(np.asarray(q.el_scaled(x)), 3 * x)
    y = np.zeros(5)
    q.parallel_do(5, y, q.el_fill)
    np.testing.assert_array_equal(y, 2.0)
    assert q.el_make_box().version() == 2

    v3 = q.compile_string("el_mod", source(3, 10))
    assert q.el_version() == 3
    assert not hasattr(q, "el_extra")  # gone with the version that defined it
    np.testing.assert_array_equal(np.asarray(q.el_scaled(x)), 10 * x)
    q.parallel_do(5, y, q.el_fill)
    np.testing.assert_array_equal(y, 3.0)
    assert q.el_scaled is v3.el_scaled

    # what the old versions made, or what refers to them, still runs the old code
    del v1, v2
    gc.collect()
    assert old_box.version() == 1
    np.testing.assert_array_equal(np.asarray(old_fn(x)), 2 * x)
    np.testing.assert_array_equal(np.asarray(kept_value), 2 * x)

    # compiling a version again is a cache hit that still becomes the current one
    q.compile_string("el_mod", source(1, 2))
    assert q.el_version() == 1
    q.compile_string("el_mod", source(3, 10))
    assert q.el_version() == 3


def test_a_torch_custom_op_is_repointed(cache):
    torch = pytest.importorskip("torch")
    q.compile_string("el_mod", source(4, 4))
    op = q.torch.custom_op(q.el_scaled, fake="x", name="el_scaled_op")
    x = torch.arange(3.0, dtype=torch.float64)
    torch.testing.assert_close(op(x), 4 * x)
    q.compile_string("el_mod", source(5, 5))
    op2 = q.torch.custom_op(q.el_scaled, fake="x", name="el_scaled_op")
    torch.testing.assert_close(op2(x), 5 * x)
    torch.testing.assert_close(op(x), 5 * x)  # the registered op calls the new code


def test_another_plugin_defining_the_name_is_still_refused(cache):
    q.compile_string("el_mod", source(6, 6))
    other = """
    ISTHMUS_PLUGIN(el_other, m) { m.def("el_version", [] { return int64_t{99}; }); }
    """
    with pytest.raises(ValueError, match=r'defines "el_version", which isthmus already has'):
        q.compile_string("el_other", other)
    assert q.el_version() == 6
    with pytest.raises(ValueError, match="already has"):
        q.compile_string("el_other2", "ISTHMUS_PLUGIN(el_other2, m) { m.def(\"zeros\", [] {}); }")
    assert q.zeros(2).shape == (2,)


def test_a_plugin_name_that_differs_from_the_source_is_refused(cache):
    src = "ISTHMUS_PLUGIN(el_unsharp, m) { m.def(\"el_u\", [] { return 1.0; }); }"
    with pytest.raises(ValueError, match=r'compile_string\("el_blur"\): the source declares the '
                                         r'plugin "el_unsharp"'):
        q.compile_string("el_blur", src)
    assert not hasattr(q, "el_u")


@pytest.mark.parametrize("names, what", [('{"a"}', "names 1 parameter(s) but has 2"),
                                         ('{"a", "b", "c"}', "names 3 parameter(s) but has 2")])
def test_a_parameter_name_list_of_the_wrong_length_is_refused(cache, names, what):
    src = ("ISTHMUS_PLUGIN(el_names, m) { m.def(\"el_add\", [](double a, double b) "
           "{ return a + b; }, NAMES); }").replace("NAMES", names)
    with pytest.raises(Exception, match=r'"el_add" ' + what.replace("(", r"\(").replace(")", r"\)")):
        q.compile_string("el_names", src)
    assert not hasattr(q, "el_add")
    kernel = ("ISTHMUS_PLUGIN(el_knames, m) { m.kernel(\"el_k\", [](isthmus::plugin::view<double, "
              "1> y, int64_t i) { y(i) = 1; }, {\"y\", \"i\"}); }")
    with pytest.raises(Exception, match=r'"el_k" names 2 parameter\(s\) but has 1.*position'):
        q.compile_string("el_knames", kernel)
