//===- LocalFunctions.cpp - bound a model's local functions ---------------===//
//
// A model's local functions (FunctionProto) may call each other, and libonnx
// expands every call recursively when it checks and infers the model: a
// function calling itself overflows its stack, and a chain of functions each
// calling the previous one twice takes 2^n steps. Both are refused here,
// before libonnx sees the model, with graphs walked iteratively (subgraphs
// nest only as deep as protobuf parsing allows, but call chains do not).
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/ModelLoader.h"

#include <map>
#include <vector>

namespace strata::onnx_importer {
namespace {

using FunctionKey = std::pair<std::string, std::string>; // domain, name

std::string describeKey(const FunctionKey &key) {
  return key.first.empty() ? key.second : key.first + "." + key.second;
}

// The default domain is spelled "" or "ai.onnx".
FunctionKey getCallKey(const onnx::NodeProto &node) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  return {domain, node.op_type()};
}

// Calls `visit` on every node of `nodes` and of the subgraphs nested in
// their attributes, without recursion.
template <typename Visit>
void forEachNode(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
    Visit visit) {
  std::vector<const onnx::NodeProto *> stack;
  for (const auto &node : nodes)
    stack.push_back(&node);
  while (!stack.empty()) {
    const onnx::NodeProto *node = stack.back();
    stack.pop_back();
    visit(*node);
    for (const auto &attr : node->attribute()) {
      if (attr.has_g())
        for (const auto &nested : attr.g().node())
          stack.push_back(&nested);
      for (const auto &graph : attr.graphs())
        for (const auto &nested : graph.node())
          stack.push_back(&nested);
    }
  }
}

} // namespace

bool checkLocalFunctions(const onnx::ModelProto &model, int64_t maxNodes,
                         std::string &error) {
  if (model.functions_size() == 0)
    return true;
  std::map<FunctionKey, int> functions;
  for (int i = 0; i < model.functions_size(); ++i) {
    const onnx::FunctionProto &function = model.functions(i);
    FunctionKey key{function.domain() == "ai.onnx" ? "" : function.domain(),
                    function.name()};
    if (!functions.emplace(key, i).second) {
      error = "invalid ONNX model: local function '" + describeKey(key) +
              "' is defined twice";
      return false;
    }
  }
  // Each function's calls of local functions, with the calling node.
  std::vector<std::vector<std::pair<int, const onnx::NodeProto *>>> callees(
      model.functions_size());
  for (int i = 0; i < model.functions_size(); ++i)
    forEachNode(model.functions(i).node(), [&](const onnx::NodeProto &node) {
      auto it = functions.find(getCallKey(node));
      if (it != functions.end())
        callees[i].push_back({it->second, &node});
    });

  // Depth-first search for a cycle, iteratively; functions are then sized
  // in the order the search finishes them (callees first).
  enum class Mark { kNew, kOnPath, kDone };
  std::vector<Mark> marks(model.functions_size(), Mark::kNew);
  std::vector<int> finished;
  for (int root = 0; root < model.functions_size(); ++root) {
    if (marks[root] != Mark::kNew)
      continue;
    // (function, index of its next callee)
    std::vector<std::pair<int, size_t>> path{{root, 0}};
    marks[root] = Mark::kOnPath;
    while (!path.empty()) {
      auto &[function, next] = path.back();
      if (next == callees[function].size()) {
        marks[function] = Mark::kDone;
        finished.push_back(function);
        path.pop_back();
        continue;
      }
      auto [callee, node] = callees[function][next++];
      if (marks[callee] == Mark::kDone)
        continue;
      if (marks[callee] == Mark::kNew) {
        marks[callee] = Mark::kOnPath;
        path.push_back({callee, 0});
        continue;
      }
      // A call back into a function on the path: a cycle.
      std::string cycle;
      bool inCycle = false;
      for (const auto &[onPath, unused] : path) {
        inCycle = inCycle || onPath == callee;
        if (!inCycle)
          continue;
        const onnx::FunctionProto &f = model.functions(onPath);
        cycle += describeKey({f.domain(), f.name()}) + " -> ";
      }
      const onnx::FunctionProto &target = model.functions(callee);
      cycle += describeKey({target.domain(), target.name()});
      error = "node '" + node->name() + "' (" + describeKey(getCallKey(*node)) +
              ") in local function '" +
              describeKey({model.functions(function).domain(),
                           model.functions(function).name()}) +
              "': a recursive call (" + cycle +
              "); ONNX functions cannot call themselves";
      return false;
    }
  }

  // Nodes each function expands to, saturating past the limit.
  auto add = [&](int64_t a, int64_t b) {
    int64_t sum;
    return __builtin_add_overflow(a, b, &sum) || sum > maxNodes ? maxNodes + 1
                                                                : sum;
  };
  std::vector<int64_t> sizes(model.functions_size(), 0);
  for (int function : finished) {
    int64_t size = 0;
    forEachNode(
        model.functions(function).node(), [&](const onnx::NodeProto &node) {
          auto it = functions.find(getCallKey(node));
          size = add(size, it == functions.end() ? 1 : sizes[it->second]);
        });
    sizes[function] = size;
  }
  int64_t total = 0;
  const onnx::NodeProto *largest = nullptr;
  int64_t largestSize = 0;
  forEachNode(model.graph().node(), [&](const onnx::NodeProto &node) {
    auto it = functions.find(getCallKey(node));
    int64_t size = it == functions.end() ? 1 : sizes[it->second];
    if (size > largestSize) {
      largest = &node;
      largestSize = size;
    }
    total = add(total, size);
  });
  // A graph that is large by itself is the node budget's to refuse.
  if (total <= maxNodes || largestSize <= 1)
    return true;
  error = "node '" + largest->name() + "' (" +
          describeKey(getCallKey(*largest)) +
          "): the model's local functions expand to more than " +
          std::to_string(maxNodes) +
          " nodes (--max-onnx-nodes); this call alone expands to " +
          (largestSize > maxNodes ? "more than " + std::to_string(maxNodes)
                                  : std::to_string(largestSize));
  return false;
}

} // namespace strata::onnx_importer
