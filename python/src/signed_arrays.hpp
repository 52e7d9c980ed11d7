// Array parameters that keep a torch tensor's sign. A torch "negative view" (torch._neg_view, or what
// conj().imag can give) holds -x in memory and its sign in a flag that DLPack does not carry: nanobind's
// ndarray caster read the memory, so weights, bias, inputs and samples arrived with the wrong sign and
// every result was silently wrong (relative error 2 for negated weights). These wrappers look at the
// flag before the ndarray caster runs:
//   SignedArray<A>:   an input; a negative view is resolved first (resolve_neg(): a copy with the sign
//                     applied), so the values are the tensor's values.
//   SignedOutput<A>:  an output written in place; resolving would write into a copy, so a negative view
//                     is marked (negative_view) and the caller refuses it with a message.
// Each is the ndarray type it wraps (a subclass), so code reads it as before; the stubs name it as the
// wrapped type, so signatures and typing are unchanged.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nova::python {

template <class Array>
struct SignedArray : Array {};

template <class Array>
struct SignedOutput : Array {
  bool negative_view = false;
};

// Whether `o` is a torch tensor with its negative bit set (other objects have no is_neg).
inline bool is_negative_view(nanobind::handle o) {
  if (!nanobind::hasattr(o, "is_neg")) return false;
  return nanobind::cast<bool>(o.attr("is_neg")());
}

}  // namespace nova::python

namespace nanobind::detail {

template <class Array>
struct type_caster<nova::python::SignedArray<Array>> {
  using Inner = make_caster<Array>;
  NB_TYPE_CASTER(nova::python::SignedArray<Array>, Inner::Name)

  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept {
    object resolved;
    try {
      if (nova::python::is_negative_view(src)) resolved = src.attr("resolve_neg")();
    } catch (const python_error&) {
      PyErr_Clear();  // not a tensor this caster can read: the ndarray caster below says no
    }
    Inner inner;
    if (!inner.from_python(resolved.is_valid() ? handle(resolved) : src, flags, cleanup)) return false;
    // The ndarray holds its own reference to the data (DLPack's owner), so `resolved` may go.
    static_cast<Array&>(value) = inner.value;
    return true;
  }
};

template <class Array>
struct type_caster<nova::python::SignedOutput<Array>> {
  using Inner = make_caster<Array>;
  NB_TYPE_CASTER(nova::python::SignedOutput<Array>, Inner::Name)

  bool from_python(handle src, uint32_t flags, cleanup_list* cleanup) noexcept {
    bool negative = false;
    try {
      negative = nova::python::is_negative_view(src);
    } catch (const python_error&) {
      PyErr_Clear();
    }
    Inner inner;
    if (!inner.from_python(src, flags, cleanup)) return false;
    static_cast<Array&>(value) = inner.value;
    value.negative_view = negative;
    return true;
  }
};

}  // namespace nanobind::detail
