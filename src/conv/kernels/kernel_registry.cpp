// One KernelTable per instruction-set path, built on first use; cpuid decides what may run.
#include "cpu_supports.hpp"
#include "kernel_table.hpp"
#include "nova/error.hpp"

namespace nova::conv {

namespace {

KernelTable make(Isa isa) {
  KernelTable t;
  t.isa = isa;
  switch (isa) {
    case Isa::kPortable:
      t.gemm = gemm_table_portable();
      t.transforms = transform_table_portable();
      t.layout = layout_table_portable();
      t.convert = convert_table_portable();
      break;
    case Isa::kAvx2:
      t.gemm = gemm_table_avx2();
      t.transforms = transform_table_avx2();
      t.layout = layout_table_portable();
      add_layout_fp32_avx2(t.layout);
      t.convert = convert_table_portable();
#if defined(__x86_64__) || defined(__i386__)
      if (cpu_supports(CpuFeature::kF16c)) {  // every AVX2 CPU made has it; the conversions need it for fp16
        add_layout_typed_avx2_f16c(t.layout);
        t.convert = convert_table_avx2();
        t.conversions = "avx2-f16c";
      }
#endif
      break;
    case Isa::kAvx512:
      t.gemm = gemm_table_avx512();
      t.transforms = transform_table_avx512();
      t.layout = layout_table_avx512();
#if defined(__x86_64__) || defined(__i386__)
      if (__builtin_cpu_supports("avx512vbmi"))
        add_layout_int8_avx512vbmi(t.layout);  // BW, VL: the path's own
#endif
      t.convert = convert_table_avx512();
      t.conversions = "avx512";
#if defined(__x86_64__) || defined(__i386__)
      if (__builtin_cpu_supports("avx512bf16")) {
        add_bf16_narrow_avx512bf16(t.layout, t.convert);
        t.conversions = "avx512 (bf16 by vcvtneps2bf16)";
      }
#endif
      break;
  }
  return t;
}

}  // namespace

std::string tensor_conversion_kernels(Isa isa) {
  return kernels(isa).conversions;
}

const KernelTable& kernels(Isa isa) {
  if (!isa_supported(isa)) throw Error("this CPU cannot run the " + to_string(isa) + " kernels");
  static const KernelTable portable = make(Isa::kPortable);
  switch (isa) {
    case Isa::kAvx2: {
      static const KernelTable t = make(Isa::kAvx2);
      return t;
    }
    case Isa::kAvx512: {
      static const KernelTable t = make(Isa::kAvx512);
      return t;
    }
    case Isa::kPortable:
      break;
  }
  return portable;
}

}  // namespace nova::conv
