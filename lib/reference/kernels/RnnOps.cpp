//===- RnnOps.cpp - RNN, GRU and LSTM -------------------------------------===//
//
// The three recurrent operators share one driver: per direction, X*W^T
// for all time steps is one GEMM, then each step adds H*R^T (another GEMM)
// and applies the operator's gate equations per batch row. Batch rows
// past their sequence_lens keep their state and leave Y zero; the reverse
// direction walks each row's own sequence backwards. float16 runs through
// float.
//
//===----------------------------------------------------------------------===//

#include "LinalgGemm.h"
#include "NnUtil.h"

#include "mncc/reference/Broadcast.h"

#include <algorithm>
#include <cctype>
#include <cmath>

using namespace mncc::reference;
using namespace mncc::reference::nn;

namespace {

enum class Cell { Rnn, Gru, Lstm };

/// An activation of the recurrent operators, with its alpha and beta.
struct Activation {
  std::string name; // lower case
  float alpha = 0, beta = 0;

  template <typename T> T operator()(T x) const {
    if (name == "sigmoid")
      return T(1) / (T(1) + std::exp(-x));
    if (name == "tanh")
      return std::tanh(x);
    if (name == "relu")
      return std::max(x, T(0));
    if (name == "affine")
      return T(alpha) * x + T(beta);
    if (name == "leakyrelu")
      return x >= 0 ? x : T(alpha) * x;
    if (name == "thresholdedrelu")
      return x > T(alpha) ? x : T(0);
    if (name == "scaledtanh")
      return T(alpha) * std::tanh(T(beta) * x);
    if (name == "hardsigmoid")
      return std::max(T(0), std::min(T(1), T(alpha) * x + T(beta)));
    if (name == "elu")
      return x >= 0 ? x : T(alpha) * (std::exp(x) - T(1));
    if (name == "softsign")
      return x / (T(1) + std::abs(x));
    // softplus
    return std::log(T(1) + std::exp(x));
  }
};

bool knownActivation(const std::string &name) {
  for (const char *known :
       {"sigmoid", "tanh", "relu", "affine", "leakyrelu", "thresholdedrelu",
        "scaledtanh", "hardsigmoid", "elu", "softsign", "softplus"})
    if (name == known)
      return true;
  return false;
}

/// Reads `activations` (defaults per cell, repeated per direction) and
/// hands out activation_alpha/beta in order to the functions that take
/// them, as ONNX Runtime does; unset ones get the ONNX operator defaults.
Status readActivations(const KernelContext &context, Cell cell,
                       int64_t directions, std::vector<Activation> &result) {
  std::vector<std::string> defaults =
      cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
      : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  size_t perDirection = defaults.size();
  std::vector<std::string> names = context.getStrings("activations");
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  // RNN's schema default, ["Tanh", "Tanh"], names both directions of a
  // bidirectional RNN; a forward one uses the first.
  if (names.size() > perDirection * directions && cell == Cell::Rnn &&
      names == std::vector<std::string>{"Tanh", "Tanh"})
    names.resize(perDirection * directions);
  if (names.size() != perDirection * directions)
    return opError(context, "needs " +
                                std::to_string(perDirection * directions) +
                                " activations");
  std::vector<float> alphas = context.getFloats("activation_alpha");
  std::vector<float> betas = context.getFloats("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : names) {
    Activation a;
    for (char c : name)
      a.name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!knownActivation(a.name))
      return opError(context, "unknown activation '" + name + "'");
    bool takesAlpha = a.name == "affine" || a.name == "leakyrelu" ||
                      a.name == "thresholdedrelu" || a.name == "scaledtanh" ||
                      a.name == "hardsigmoid" || a.name == "elu";
    bool takesBeta =
        a.name == "affine" || a.name == "scaledtanh" || a.name == "hardsigmoid";
    a.alpha = a.name == "leakyrelu"     ? 0.01f
              : a.name == "hardsigmoid" ? 0.2f
                                        : 1.0f;
    a.beta = a.name == "hardsigmoid" ? 0.5f : a.name == "affine" ? 0.0f : 1.0f;
    if (takesAlpha && nextAlpha < alphas.size())
      a.alpha = alphas[nextAlpha++];
    if (takesBeta && nextBeta < betas.size())
      a.beta = betas[nextBeta++];
    result.push_back(a);
  }
  return Status::success();
}

struct RnnShape {
  int64_t seq, batch, input, hidden, directions, gates;
  bool batchFirst;
};

/// Reads an optional [directions, batch, hidden] state (layout 1:
/// [batch, directions, hidden]) into [directions][batch * hidden].
template <typename T>
Status readState(const KernelContext &context, size_t index, const RnnShape &s,
                 std::vector<std::vector<T>> &state) {
  state.assign(s.directions, std::vector<T>(s.batch * s.hidden, T(0)));
  const Tensor *in = context.inputTensor(index);
  if (!in)
    return Status::success();
  std::vector<int64_t> expected =
      s.batchFirst ? std::vector<int64_t>{s.batch, s.directions, s.hidden}
                   : std::vector<int64_t>{s.directions, s.batch, s.hidden};
  if (in->shape() != expected)
    return opError(context, "initial state must have shape " +
                                shapeToString(expected) + ", not " +
                                shapeToString(in->shape()));
  Tensor t = castFloat(*in, dtypeOf<T>());
  for (int64_t d = 0; d < s.directions; ++d)
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.hidden; ++h)
        state[d][b * s.hidden + h] =
            t.data<T>()[s.batchFirst ? (b * s.directions + d) * s.hidden + h
                                     : (d * s.batch + b) * s.hidden + h];
  return Status::success();
}

template <typename T>
Status runRecurrent(KernelContext &context, Cell cell, const RnnShape &s,
                    const std::vector<Activation> &acts,
                    const std::string &direction) {
  DType work = dtypeOf<T>();
  const Tensor *xIn = context.inputTensor(0);
  Tensor w = castFloat(*context.inputTensor(1), work);
  Tensor r = castFloat(*context.inputTensor(2), work);
  const Tensor *bIn = context.inputTensor(3);
  const Tensor *lensIn = context.inputTensor(4);
  int64_t gh = s.gates * s.hidden;
  std::vector<T> bias(s.directions * 2 * gh, T(0));
  if (bIn) {
    if (bIn->shape() != std::vector<int64_t>{s.directions, 2 * gh})
      return opError(context, "B must have shape " +
                                  shapeToString({s.directions, 2 * gh}));
    Tensor b = castFloat(*bIn, work);
    std::copy(b.data<T>(), b.data<T>() + b.numElements(), bias.begin());
  }
  std::vector<int64_t> lens(s.batch, s.seq);
  if (lensIn) {
    if (lensIn->numElements() != s.batch)
      return opError(context, "sequence_lens must have batch_size values");
    for (int64_t b = 0; b < s.batch; ++b) {
      lens[b] = lensIn->elementAsInt64(b);
      if (lens[b] < 0 || lens[b] > s.seq)
        return opError(context, "sequence_lens out of range");
    }
  }
  std::vector<std::vector<T>> hState, cState;
  if (Status st = readState(context, 5, s, hState); !st)
    return st;
  std::vector<T> peep(s.directions * 3 * s.hidden, T(0));
  if (cell == Cell::Lstm) {
    if (Status st = readState(context, 6, s, cState); !st)
      return st;
    if (const Tensor *pIn = context.inputTensor(7)) {
      if (pIn->shape() != std::vector<int64_t>{s.directions, 3 * s.hidden})
        return opError(context,
                       "P must have shape " +
                           shapeToString({s.directions, 3 * s.hidden}));
      Tensor p = castFloat(*pIn, work);
      std::copy(p.data<T>(), p.data<T>() + p.numElements(), peep.begin());
    }
  }
  bool hasClip = context.hasAttribute("clip");
  T clip = T(context.getFloat("clip", 0));
  auto clipped = [&](T v) {
    return hasClip ? std::min(clip, std::max(-clip, v)) : v;
  };
  bool linearBeforeReset = context.getInt("linear_before_reset", 0) != 0;
  bool inputForget = context.getInt("input_forget", 0) != 0;

  // X as [seq, batch, input].
  Tensor x = castFloat(*xIn, work);
  std::vector<T> xs(s.seq * s.batch * s.input);
  for (int64_t t = 0; t < s.seq; ++t)
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t i = 0; i < s.input; ++i)
        xs[(t * s.batch + b) * s.input + i] =
            x.data<T>()[s.batchFirst ? (b * s.seq + t) * s.input + i
                                     : (t * s.batch + b) * s.input + i];
  // Y as [seq, directions, batch, hidden]; laid out for layout 1 at the end.
  std::vector<T> y(s.seq * s.directions * s.batch * s.hidden, T(0));
  std::vector<T> xw(s.seq * s.batch * gh), hr(s.batch * gh),
      rh(s.batch * s.hidden), hrh(s.batch * s.hidden);
  int64_t H = s.hidden;
  for (int64_t d = 0; d < s.directions; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    const T *wd = w.data<T>() + d * gh * s.input;
    const T *rd = r.data<T>() + d * gh * H;
    const T *wb = bias.data() + d * 2 * gh;
    const T *rb = wb + gh;
    const T *pd = peep.data() + d * 3 * H;
    const Activation *f = &acts[d * acts.size() / s.directions];
    linalg::gemm(false, true, s.seq * s.batch, gh, s.input, T(1), xs.data(),
                 s.input, wd, s.input, T(0), xw.data(), gh);
    std::vector<T> &hs = hState[d];
    for (int64_t step = 0; step < s.seq; ++step) {
      linalg::gemm(false, true, s.batch, gh, H, T(1), hs.data(), H, rd, H, T(0),
                   hr.data(), gh);
      if (cell == Cell::Gru && !linearBeforeReset) {
        // (r .* H) * Rh^T needs r first.
        for (int64_t b = 0; b < s.batch; ++b) {
          int64_t t = reverse ? lens[b] - 1 - step : step;
          if (step >= lens[b])
            continue;
          const T *g = xw.data() + (t * s.batch + b) * gh;
          for (int64_t h = 0; h < H; ++h) {
            T rGate = f[0](
                clipped(g[H + h] + hr[b * gh + H + h] + wb[H + h] + rb[H + h]));
            rh[b * H + h] = rGate * hs[b * H + h];
          }
        }
        linalg::gemm(false, true, s.batch, H, H, T(1), rh.data(), H,
                     rd + 2 * H * H, H, T(0), hrh.data(), H);
      }
      for (int64_t b = 0; b < s.batch; ++b) {
        if (step >= lens[b])
          continue;
        int64_t t = reverse ? lens[b] - 1 - step : step;
        const T *g = xw.data() + (t * s.batch + b) * gh;
        const T *q = hr.data() + b * gh;
        T *hb = hs.data() + b * H;
        for (int64_t h = 0; h < H; ++h) {
          if (cell == Cell::Rnn) {
            hb[h] = f[0](clipped(g[h] + q[h] + wb[h] + rb[h]));
          } else if (cell == Cell::Gru) {
            T z = f[0](clipped(g[h] + q[h] + wb[h] + rb[h]));
            T rGate =
                f[0](clipped(g[H + h] + q[H + h] + wb[H + h] + rb[H + h]));
            T candidate =
                linearBeforeReset
                    ? f[1](clipped(g[2 * H + h] + wb[2 * H + h] +
                                   rGate * (q[2 * H + h] + rb[2 * H + h])))
                    : f[1](clipped(g[2 * H + h] + hrh[b * H + h] +
                                   wb[2 * H + h] + rb[2 * H + h]));
            hb[h] = (T(1) - z) * candidate + z * hb[h];
          } else {
            // Gate order i, o, f, c; peepholes P = [Pi, Po, Pf].
            T &c = cState[d][b * H + h];
            auto pre = [&](int64_t gate) {
              return g[gate * H + h] + q[gate * H + h] + wb[gate * H + h] +
                     rb[gate * H + h];
            };
            T i = f[0](clipped(pre(0) + pd[h] * c));
            T fg = inputForget ? T(1) - i
                               : f[0](clipped(pre(2) + pd[2 * H + h] * c));
            T cand = f[1](clipped(pre(3)));
            c = fg * c + i * cand;
            T o = f[0](clipped(pre(1) + pd[H + h] * c));
            hb[h] = o * f[2](c);
          }
        }
        std::copy(hb, hb + H,
                  y.begin() + ((t * s.directions + d) * s.batch + b) * H);
      }
    }
  }
  DType dtype = xIn->dtype();
  auto emit = [&](size_t index, std::vector<int64_t> shape, auto &&valueAt) {
    if (context.numOutputs() <= index || !context.wantsOutput(index))
      return;
    Tensor out(work, shape);
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.data<T>()[i] = valueAt(i);
    context.setOutput(index, castFloat(out, dtype));
  };
  int64_t D = s.directions, B = s.batch;
  if (s.batchFirst)
    emit(0, {B, s.seq, D, H}, [&](int64_t i) {
      int64_t h = i % H, d = (i / H) % D, t = (i / (H * D)) % s.seq,
              b = i / (H * D * s.seq);
      return y[((t * D + d) * B + b) * H + h];
    });
  else
    emit(0, {s.seq, D, B, H}, [&](int64_t i) { return y[i]; });
  for (size_t index = 1; index <= (cell == Cell::Lstm ? 2u : 1u); ++index) {
    auto &state = index == 1 ? hState : cState;
    if (s.batchFirst)
      emit(index, {B, D, H}, [&](int64_t i) {
        int64_t h = i % H, d = (i / H) % D, b = i / (H * D);
        return state[d][b * H + h];
      });
    else
      emit(index, {D, B, H}, [&](int64_t i) {
        int64_t h = i % H, b = (i / H) % B, d = i / (H * B);
        return state[d][b * H + h];
      });
  }
  return Status::success();
}

Status recurrent(KernelContext &context, Cell cell) {
  if (Status st = requireFloatInput(context, 0, "X"); !st)
    return st;
  if (Status st = requireFloatInput(context, 1, "W"); !st)
    return st;
  if (Status st = requireFloatInput(context, 2, "R"); !st)
    return st;
  const Tensor *x = context.inputTensor(0);
  const Tensor *w = context.inputTensor(1);
  const Tensor *r = context.inputTensor(2);
  RnnShape s;
  s.gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  s.batchFirst = context.getInt("layout", 0) != 0;
  std::string direction = context.getString("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return opError(context, "unknown direction '" + direction + "'");
  s.directions = direction == "bidirectional" ? 2 : 1;
  if (x->rank() != 3 || w->rank() != 3 || r->rank() != 3)
    return opError(context, "X, W and R must be 3-D");
  s.seq = x->shape()[s.batchFirst ? 1 : 0];
  s.batch = x->shape()[s.batchFirst ? 0 : 1];
  s.input = x->shape()[2];
  s.hidden = context.getInt("hidden_size", r->shape()[2]);
  if (w->shape() !=
          std::vector<int64_t>{s.directions, s.gates * s.hidden, s.input} ||
      r->shape() !=
          std::vector<int64_t>{s.directions, s.gates * s.hidden, s.hidden})
    return opError(context, "W " + shapeToString(w->shape()) + " or R " +
                                shapeToString(r->shape()) +
                                " does not match hidden_size " +
                                std::to_string(s.hidden) + " and X " +
                                shapeToString(x->shape()));
  std::vector<Activation> acts;
  if (Status st = readActivations(context, cell, s.directions, acts); !st)
    return st;
  if (computeType(x->dtype()) == DType::Float64)
    return runRecurrent<double>(context, cell, s, acts, direction);
  return runRecurrent<float>(context, cell, s, acts, direction);
}

Status rnnKernel(KernelContext &context) {
  return recurrent(context, Cell::Rnn);
}
Status gruKernel(KernelContext &context) {
  return recurrent(context, Cell::Gru);
}
Status lstmKernel(KernelContext &context) {
  return recurrent(context, Cell::Lstm);
}

} // namespace

MNCC_REFERENCE_KERNEL("", RNN, rnnKernel);
MNCC_REFERENCE_KERNEL("", GRU, gruKernel);
MNCC_REFERENCE_KERNEL("", LSTM, lstmKernel);
