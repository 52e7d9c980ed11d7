// nova._nova: the compiled half of the Python package (the public face is python/nova/__init__.py).
#include "bindings.hpp"
#include "nova/error.hpp"

NB_MODULE(_nova, m) {
  m.doc() = "nova's C++ core (use the `nova` package, not this module directly)";
  // nova::Error is a user error (bad points, bad files, bad shapes): ValueError in Python.
  nanobind::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const nova::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  nova::python::bind_exact(m);
  nova::python::bind_analysis(m);
  nova::python::bind_numerics(m);
  nova::python::bind_discover(m);
  nova::python::bind_catalogue(m);
  nova::python::bind_conv(m);
  nova::python::bind_cuda(m);
  nova::python::bind_memory_fingerprint(m);
}
