//===- InputShapePins.h - static sizes for a model's dynamic inputs -*- C++
//-*-===//
//
// A model exported with dynamic axes declares its inputs with symbolic
// dimensions (`batch`, `sequence`) or unnamed ones. Pinning gives them
// static sizes before the model is checked and its shapes are inferred, so
// that it compiles as a static export would, as ONNX Runtime's
// free-dimension overrides and `tvmc --input-shapes` do:
//
//   --dim=batch=1                 every dimension named `batch`
//   --input-shape=pixels=1x3x224x224
//                                 every dimension of input `pixels`
//   --input-shape=audio=?x512     the second; the first stays dynamic
//   --input-value=sr=16000        input `sr` becomes a constant of the
//                                 model (an If on it folds to one branch)
//
// A pin that contradicts the model (a static size, another pin of the same
// name) or names nothing in it is an error that says so.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_INPUTSHAPEPINS_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_INPUTSHAPEPINS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "llvm/ADT/StringRef.h"

namespace onnx {
class ModelProto;
} // namespace onnx

namespace strata {

// A dimension an --input-shape pin leaves as the model declares it (`?`).
inline constexpr int64_t kDynamicPin = -1;

struct InputShapePins {
  // Symbolic dimension name -> size.
  std::vector<std::pair<std::string, int64_t>> dims;
  // Graph input name -> its whole shape.
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;
  // Graph input name -> the elements it always holds, as written.
  std::vector<std::pair<std::string, std::vector<std::string>>> values;

  bool empty() const {
    return dims.empty() && inputs.empty() && values.empty();
  }
};

// Parses `NAME=SIZE` (a --dim pin) into `pins`; false with `error` when it is
// malformed.
bool parseDimPin(llvm::StringRef text, InputShapePins &pins,
                 std::string &error);

// Parses `NAME=D0xD1x...` (an --input-shape pin; `?` leaves a dimension
// dynamic; a scalar input's shape is empty: `NAME=`) into `pins`; false with
// `error` when it is malformed.
bool parseInputShapePin(llvm::StringRef text, InputShapePins &pins,
                        std::string &error);

// Parses `NAME=V0,V1,...` (an --input-value pin: the elements, row-major,
// of an input whose shape is static) into `pins`; false with `error` when
// it is malformed.
bool parseInputValuePin(llvm::StringRef text, InputShapePins &pins,
                        std::string &error);

namespace onnx_importer {

// Gives the dimensions `pins` names their sizes in `model`'s graph inputs,
// and the same symbolic names in its outputs and value types, and makes
// each input with pinned values an initializer. False with `error` when a
// pin names no input or dimension, or contradicts the model or another pin.
bool applyInputShapePins(onnx::ModelProto &model, const InputShapePins &pins,
                         std::string &error);

} // namespace onnx_importer
} // namespace strata

#endif // STRATA_COMPILER_IMPORTERS_ONNX_INPUTSHAPEPINS_H_
