// Each part of the library binds itself in its own file; module.cpp calls them in layer order.
#pragma once

#include <nanobind/nanobind.h>

namespace nova::python {

void bind_exact(nanobind::module_& m);
void bind_conv(nanobind::module_& m);

}  // namespace nova::python
