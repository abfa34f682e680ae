// Internal: the dtype rules of reductions (device-agnostic; shared by the op layer and every
// backend).
#pragma once

#include "isthmus/backend.hpp"

namespace isthmus::ops {

/// The dtype a reduction of `kind` over a `dt` tensor produces (NumPy's rules): sum and prod
/// widen bool and integers to int64 (uint64 for unsigned), mean gives float64 for bool and
/// integers, min and max keep `dt`, any and all give bool, argmin and argmax int64.
dtype reduce_result_dtype(backend::reduce_kind kind, dtype dt);

/// The dtype var/std of a `dt` tensor produces (float64 for bool/integers, the real dtype for
/// complex, else `dt`).
dtype var_result_dtype(dtype dt);

/// The dtype var/std sums the squared deviations of a `dt` tensor in (float64 when the result
/// is float64, else float32).
dtype var_work_dtype(dtype dt);

/// The dtype cumsum/cumprod of a `dt` tensor produces (the same as sum()).
dtype cumulative_result_dtype(dtype dt);

} // namespace isthmus::ops
