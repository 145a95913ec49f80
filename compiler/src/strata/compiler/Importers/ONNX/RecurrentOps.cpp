//===- RecurrentOps.cpp - LSTM, GRU, RNN ----------------------------------===//
#include "strata/compiler/Importers/ONNX/NodeContext.h"

namespace strata::onnx_importer {

// Recurrent ops are not lowered yet; they report "unsupported op".
void addRecurrentLowerings(LoweringTable &) {}

} // namespace strata::onnx_importer
