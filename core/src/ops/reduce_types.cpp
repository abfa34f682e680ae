// The dtype rules of reductions: sum/prod/mean/min/max/any/all/argmin/argmax, var/std, cumsum.
#include "ops/reduce_types.hpp"

namespace isthmus::ops {

dtype reduce_result_dtype(backend::reduce_kind kind, dtype dt) {
    switch (kind) {
    case backend::reduce_kind::sum:
    case backend::reduce_kind::prod:
        return cumulative_result_dtype(dt);
    case backend::reduce_kind::mean:
        return is_inexact(dt) ? dt : dtype::float64;
    case backend::reduce_kind::min:
    case backend::reduce_kind::max:
        return dt;
    case backend::reduce_kind::any:
    case backend::reduce_kind::all:
        return dtype::bool_;
    case backend::reduce_kind::argmin:
    case backend::reduce_kind::argmax:
        return dtype::int64;
    }
    return dt;
}

dtype var_result_dtype(dtype dt) {
    if (is_complex(dt)) return real_dtype(dt);
    return is_inexact(dt) ? dt : dtype::float64;
}

dtype var_work_dtype(dtype dt) {
    return var_result_dtype(dt) == dtype::float64 ? dtype::float64 : dtype::float32;
}

dtype cumulative_result_dtype(dtype dt) {
    if (is_bool(dt) || is_signed_int(dt)) return dtype::int64;
    if (is_unsigned_int(dt)) return dtype::uint64;
    return dt;
}

} // namespace isthmus::ops
