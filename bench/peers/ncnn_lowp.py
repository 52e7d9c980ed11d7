"""ncnn's low-precision 3x3 convolution (int8 and bf16) as a peer for `bench/peer_bench.py --lowp`.

Runs inside a worker subprocess of peer_bench.py (ncnn's OpenMP runtime in a process of its own). Each
layer is a one-layer net, `Input data` -> `Convolution conv` (3x3, stride 1, pad 1, bias) -> `out`, built
in memory (param text + model bytes), Winograd allowed (ncnn picks its Winograd tile or gemm itself),
net.opt.num_threads = the thread count. ncnn has no batch dimension: N images are N extracts.

int8: ncnn's own int8 path (net.opt.use_int8_inference). The weights are quantized here, symmetric per
output channel (scale = 127 / max|w|), and stored as int8 in the model; the input scale is 127 / max|x|
over the benchmark input (a calibrated scale, like nova's `int8 cal`). The model format, from ncnn's
src/layer/convolution.cpp (load_param, load_model) and src/modelbin.cpp (ModelBinFromDataReader::load):
  .param  Convolution params 0=num_output 1=kernel_w 3=stride_w 4=pad_left 5=bias_term
          6=weight_data_size 8=int8_scale_term (nonzero: int8; >100 would also read a top_blob scale and
          requantize the output to int8; here 2: fp32 output)
  .bin    weight_data: a 4-byte tag, 0x000D4B38 = int8, then weight_data_size int8 bytes padded to a
          multiple of 4 (alignSize(w, 4)); bias_data: num_output float32, raw (mb.load(num_output, 1),
          no tag); weight_data_int8_scales: num_output float32, raw; bottom_blob_int8_scales: 1 float32.
ncnn then quantizes q = clamp(round(v * scale), -127, 127) and dequantizes sum / (x_scale * w_scale[k])
+ bias. On x86, Convolution_x86::create_pipeline_int8_x86 takes the int8 Winograd (F(4,3), or F(2,3)
without use_winograd43_convolution) for 3x3 stride-1 layers with more than 8 input or output channels.

bf16: net.opt.use_bf16_storage with fp32 weights in the model. On x86 ncnn's Convolution reports
support_bf16_storage and keeps the activations in bf16; on its Winograd path the transforms, the
GEMMs and the weights stay fp32 (the output is the fp32 result rounded to bf16), on its packed/gemm path
the weights are bf16 as well. Whether bf16 is really used is checked on every layer (the output blob
must be 16-bit); where it is not, the result says so instead of a time.

Timing (like the other peers): the input is converted outside the timing (int8: quantized and packed
to elempack 8; bf16: cast to bf16 and packed to the elempack ncnn's x86 layers use), and the output
is taken raw (extract type 1: int8 -> fp32 packed blob, bf16 -> bf16 packed blob). For comparison with
nova, which takes fp32 input and writes fp32 output, the same nets are also timed with fp32 input and
unpacked fp32 output (ncnn converting inside the timing): `*_fp32io_*`.
"""
import os
import struct

TAG_INT8 = 0x000D4B38  # ncnn/src/modelbin.cpp: int8 weight data follows
TAG_FP32 = 0x00000000  # raw float32 weight data follows


def _param(c, h, w, k, int8):
    return ("7767517\n2 2\nInput data 0 1 data 0=%d 1=%d 2=%d\n"
            "Convolution conv 1 1 data out 0=%d 1=3 3=1 4=1 5=1 6=%d%s\n") % (
                w, h, c, k, k * c * 9, " 8=2" if int8 else "")


def quantize_weights(wt):
    """Symmetric per output channel: scale = 127 / max|w| (int8 codes, float32 scales)."""
    import numpy as np
    k = wt.shape[0]
    amax = np.abs(wt.reshape(k, -1)).max(axis=1)
    scales = np.where(amax > 0, 127.0 / np.maximum(amax, 1e-30), 0.0).astype(np.float32)
    q = np.clip(np.round(wt.reshape(k, -1) * scales[:, None]), -127, 127).astype(np.int8)
    return q, scales


def int8_model(wt, bias, x_scale):
    """ncnn .bin bytes for an int8 Convolution with int8_scale_term = 2 (see the module docstring)."""
    import numpy as np
    q, w_scales = quantize_weights(wt)
    data = q.tobytes()
    data += b"\0" * ((-len(data)) % 4)  # ModelBin reads alignSize(w, 4) int8 bytes
    return (struct.pack("<I", TAG_INT8) + data + bias.astype(np.float32).tobytes() + w_scales.tobytes()
            + np.array([x_scale], dtype=np.float32).tobytes())


def fp32_model(wt, bias):
    import numpy as np
    return struct.pack("<I", TAG_FP32) + wt.astype(np.float32).tobytes() + bias.astype(np.float32).tobytes()


def reference(x, wt, bias):
    """float64 3x3 stride-1 pad-1 convolution of one image, x (C,H,W) -> (K,H,W)."""
    import numpy as np
    c, h, w = x.shape
    k = wt.shape[0]
    xp = np.zeros((c, h + 2, w + 2))
    xp[:, 1:-1, 1:-1] = x
    wd = wt.astype(np.float64)
    y = np.repeat(bias.astype(np.float64)[:, None], h * w, axis=1)
    for dy in range(3):
        for dx in range(3):
            y += wd[:, :, dy, dx] @ xp[:, dy:dy + h, dx:dx + w].reshape(c, h * w)
    return y.reshape(k, h, w)


def rel_l2(y, ref):
    import numpy as np
    d = y.astype(np.float64) - ref
    return float(np.sqrt((d * d).sum() / max((ref * ref).sum(), 1e-300)))


def _x86_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


def _pack_for(channels, bits, avx512):
    """The elempack ncnn's x86 layers use for a blob of `channels` channels (net.cpp convert_layout)."""
    if bits == 8:
        return 8 if channels % 8 == 0 else 1
    for p in ((16, 8, 4) if avx512 else (8, 4)):
        if channels % p == 0:
            return p
    return 1


def _net(ncnn, param, model, threads, int8=False, bf16=False):
    net = ncnn.Net()
    net.opt.num_threads = threads
    net.opt.use_packing_layout = True
    net.opt.use_winograd_convolution = True
    for flag in ("use_fp16_storage", "use_fp16_packed", "use_fp16_arithmetic", "use_bf16_storage",
                 "use_bf16_packed", "use_int8_inference"):
        setattr(net.opt, flag, False)
    net.opt.use_int8_inference = int8
    net.opt.use_bf16_storage = bf16
    net.opt.use_bf16_packed = bf16
    if net.load_param_mem(param) != 0:
        raise RuntimeError("ncnn load_param failed")
    net.load_model_mem(model)
    return net


def worker_ncnn_lowp(configs, timer, check=False):
    """For each (layer, threads): ncnn int8 and bf16 timings (timer(fn) -> (wall ms, CPU ms), per execute
    of the whole batch) and, with check, their relative L2 errors against float64 on image 0."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's reference must not compete with ncnn
    import ncnn
    import numpy as np
    avx512 = _x86_has_avx512()
    out = []
    for layer, threads in configs:
        n, c, h, w, k = layer
        # nova bench conv's data: input uniform in [-1,1], weights in [-0.1,0.1], bias in [-1,1].
        rng = np.random.default_rng(1)
        xs = [(rng.random((c, h, w), dtype=np.float32) * 2 - 1).astype(np.float32) for _ in range(n)]
        wt = ((rng.random((k, c, 3, 3), dtype=np.float32) * 2 - 1) * 0.1).astype(np.float32)
        bias = (rng.random(k, dtype=np.float32) * 2 - 1).astype(np.float32)
        x_scale = np.float32(127.0 / max(float(max(np.abs(x).max() for x in xs)), 1e-30))
        opt1 = ncnn.Option()  # conversions outside the timing: plain layout, one thread
        opt1.num_threads = 1
        opt1.use_packing_layout = False
        fp32_in = [ncnn.Mat(x) for x in xs]
        ref = reference(xs[0], wt, bias) if check else None
        res = {"layer": list(layer), "threads": threads}

        def timed(net, inputs, raw):
            def run():
                for m in inputs:
                    ex = net.create_extractor()
                    ex.input("data", m)
                    ex.extract("out", raw)
            return timer(run)

        def result(net, m):
            ex = net.create_extractor()
            ex.input("data", m)
            ret, y = ex.extract("out")  # type 0: fp32, unpacked
            if ret != 0:
                raise RuntimeError("ncnn extract failed (%d)" % ret)
            return np.array(y, dtype=np.float32).reshape(k, h, w)

        def measure(kind, make_net, make_inputs, output_ok):
            """Times and (with check) errors of one kind ("int8" or "bf16") into res; on any failure its
            reason under "<kind>_why" instead of a number."""
            try:
                net = make_net()
                inputs = make_inputs()
                ex = net.create_extractor()
                ex.input("data", inputs[0])
                ret, raw = ex.extract("out", 1)
                if ret != 0:
                    raise RuntimeError("%s net failed (ret %d)" % (kind, ret))
                output_ok(raw)
                res[kind + "_ms"], res[kind + "_cpu_ms"] = timed(net, inputs, 1)
                res[kind + "_fp32io_ms"], res[kind + "_fp32io_cpu_ms"] = timed(net, fp32_in, 0)
                if check:
                    res[kind + "_rel_l2_error"] = rel_l2(result(net, inputs[0]), ref)
                    res[kind + "_fp32io_rel_l2_error"] = rel_l2(result(net, fp32_in[0]), ref)
                    if res[kind + "_rel_l2_error"] > 0.1:
                        raise RuntimeError("%s result wrong (rel L2 error %.3g)" % (kind, res[kind + "_rel_l2_error"]))
                del net
            except Exception as e:  # report, do not fake a number
                for key in ("_ms", "_cpu_ms", "_fp32io_ms", "_fp32io_cpu_ms"):
                    res.pop(kind + key, None)
                res[kind + "_why"] = str(e)

        def int8_output_ok(raw):
            if raw.elembits() != 32:
                raise RuntimeError("int8 net gave no fp32 output")

        def bf16_output_ok(raw):
            if raw.elembits() != 16:
                raise RuntimeError("no bf16 path on x86 (use_bf16_storage leaves the Convolution output fp32)")

        scale_values = np.array([x_scale], dtype=np.float32)  # kept alive: the Mat does not own it
        scale = ncnn.Mat(scale_values)
        measure("int8",
                lambda: _net(ncnn, _param(c, h, w, k, True), int8_model(wt, bias, x_scale), threads, int8=True),
                lambda: [ncnn.convert_packing(ncnn.quantize_to_int8(m, scale, opt1), _pack_for(c, 8, avx512), opt1)
                         for m in fp32_in],
                int8_output_ok)
        measure("bf16",
                lambda: _net(ncnn, _param(c, h, w, k, False), fp32_model(wt, bias), threads, bf16=True),
                lambda: [ncnn.convert_packing(ncnn.cast_float32_to_bfloat16(m, opt1), _pack_for(c, 16, avx512), opt1)
                         for m in fp32_in],
                bf16_output_ok)
        out.append(res)
    return out
