// Times one oneDNN (2.x C++ API) f32 primitive and prints
//   {"median_ms": ..., "min_ms": ..., "gflops": ..., "impl": "..."}
// for bench/run_kernels_bench.py, which builds it with
//   g++ -O2 -std=c++17 bench/onednn_kernels.cpp -ldnnl -o
//   build/bench-kernels/onednn_kernels
//
// Usage:
//   onednn_kernels [--iterations=N] [--warmup=N] matmul M K N
//   onednn_kernels [--iterations=N] [--warmup=N] batch_matmul B M K N
//   onednn_kernels [--iterations=N] [--warmup=N] conv N C H W OC KH KW stride
//   pad dilation groups
// (depthwise: groups = C = OC). Weights are created with format_tag::any, and
// for convolutions src and dst too, so oneDNN picks its blocked layouts as a
// framework built on it (ONNX Runtime's oneDNN provider) does; only the
// primitive's execution is timed, never reorders. Threads: the Debian build
// uses OpenMP, so OMP_NUM_THREADS sets them.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

using namespace dnnl;

namespace {

void fillRandom(memory &m, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float *p = static_cast<float *>(m.get_data_handle());
  size_t n = m.get_desc().get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i)
    p[i] = dist(rng);
}

int usage() {
  std::fprintf(
      stderr,
      "usage: onednn_kernels [--iterations=N] [--warmup=N] matmul M K N\n"
      "       onednn_kernels [...] batch_matmul B M K N\n"
      "       onednn_kernels [...] conv N C H W OC KH KW stride pad "
      "dilation groups\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  int iterations = 50, warmup = 5;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--iterations=", 0) == 0)
      iterations = std::atoi(a.c_str() + 13);
    else if (a.rfind("--warmup=", 0) == 0)
      warmup = std::atoi(a.c_str() + 9);
    else
      args.push_back(a);
  }
  if (args.empty() || iterations < 1)
    return usage();
  std::vector<long> v;
  for (size_t i = 1; i < args.size(); ++i)
    v.push_back(std::atol(args[i].c_str()));

  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  using dt = memory::data_type;
  using tag = memory::format_tag;

  primitive prim;
  std::unordered_map<int, memory> margs;
  std::string impl;
  double flops = 0;
  try {
    if (args[0] == "matmul" || args[0] == "batch_matmul") {
      bool batched = args[0] == "batch_matmul";
      if (v.size() != (batched ? 4u : 3u))
        return usage();
      long b = batched ? v[0] : 1, m = v[batched], k = v[batched + 1],
           n = v[batched + 2];
      memory::dims sd = batched ? memory::dims{b, m, k} : memory::dims{m, k};
      memory::dims wd = batched ? memory::dims{b, k, n} : memory::dims{k, n};
      memory::dims dd = batched ? memory::dims{b, m, n} : memory::dims{m, n};
      tag plain = batched ? tag::abc : tag::ab;
      memory::desc src(sd, dt::f32, plain), wei(wd, dt::f32, tag::any),
          dst(dd, dt::f32, plain);
      matmul::primitive_desc pd(matmul::desc(src, wei, dst), eng);
      impl = pd.impl_info_str();
      margs[DNNL_ARG_SRC] = memory(pd.src_desc(), eng);
      margs[DNNL_ARG_WEIGHTS] = memory(pd.weights_desc(), eng);
      margs[DNNL_ARG_DST] = memory(pd.dst_desc(), eng);
      prim = matmul(pd);
      flops = 2.0 * b * m * k * n;
    } else if (args[0] == "conv") {
      if (v.size() != 11)
        return usage();
      long n = v[0], c = v[1], h = v[2], w = v[3], oc = v[4], kh = v[5],
           kw = v[6], stride = v[7], pad = v[8], dil = v[9], g = v[10];
      long oh = (h + 2 * pad - dil * (kh - 1) - 1) / stride + 1;
      long ow = (w + 2 * pad - dil * (kw - 1) - 1) / stride + 1;
      memory::dims wd = g == 1 ? memory::dims{oc, c, kh, kw}
                               : memory::dims{g, oc / g, c / g, kh, kw};
      memory::desc src({n, c, h, w}, dt::f32, tag::any),
          wei(wd, dt::f32, tag::any), dst({n, oc, oh, ow}, dt::f32, tag::any);
      // oneDNN counts dilation from 0 (no holes).
      convolution_forward::desc d(
          prop_kind::forward_inference, algorithm::convolution_direct, src, wei,
          dst, {stride, stride}, {dil - 1, dil - 1}, {pad, pad}, {pad, pad});
      convolution_forward::primitive_desc pd(d, eng);
      impl = pd.impl_info_str();
      margs[DNNL_ARG_SRC] = memory(pd.src_desc(), eng);
      margs[DNNL_ARG_WEIGHTS] = memory(pd.weights_desc(), eng);
      margs[DNNL_ARG_DST] = memory(pd.dst_desc(), eng);
      prim = convolution_forward(pd);
      flops = 2.0 * n * oc * oh * ow * (c / g) * kh * kw;
    } else {
      return usage();
    }
  } catch (const dnnl::error &e) {
    std::fprintf(stderr, "oneDNN: %s (status %d)\n", e.what(), (int)e.status);
    return 1;
  }

  std::mt19937 rng(0);
  for (auto &kv : margs)
    fillRandom(kv.second, rng);

  for (int i = 0; i < warmup; ++i)
    prim.execute(strm, margs);
  strm.wait();
  std::vector<double> ms;
  ms.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    prim.execute(strm, margs);
    strm.wait();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  size_t mid = ms.size() / 2;
  double median = ms.size() % 2 ? ms[mid] : 0.5 * (ms[mid - 1] + ms[mid]);
  std::string escaped;
  for (char ch : impl)
    if (ch != '"' && ch != '\\')
      escaped += ch;
  std::printf("{\"median_ms\": %.6f, \"min_ms\": %.6f, \"gflops\": %.3f, "
              "\"iterations\": %d, \"impl\": \"%s\"}\n",
              median, ms.front(), flops / (median * 1e6), iterations,
              escaped.c_str());
  return 0;
}
