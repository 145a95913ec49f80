//===- strata_python.cpp - the _strata extension of `import strata` -------===//
//
// Two halves, both thin:
//  - _compile: strata::compiler::compile (compiler/.../API/Compile.h) with
//    Python values in and (ok, bytes, diagnostics) out; strata/__init__.py
//    turns a failure into CompileError.
//  - Session / Function: the runtime's C API (runtime/include/strata/
//    runtime.h). Inputs are numpy arrays imported without a copy where the
//    device can use their memory (strata_buffer_view_import, the array kept
//    alive until the runtime lets go of it); outputs are numpy arrays over
//    the result's own memory where it is the caller's alone
//    (strata_buffer_view_exclusive_host_data: the array's base keeps the
//    result alive), copies otherwise. Argument checks happen here, against
//    the function's reflection, so that errors are ValueError/TypeError
//    naming the argument; what the runtime refuses is RuntimeError with its
//    message.
//
//===----------------------------------------------------------------------===//
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "strata/compiler/API/Compile.h"
#include "strata/runtime.h"
#include "strata_version.h"

namespace py = pybind11;

namespace {

//===----------------------------------------------------------------------===//
// Compile
//===----------------------------------------------------------------------===//

// (ok, module bytes, [(severity, file, line, column, message, name)]).
py::tuple compileProgram(
    std::optional<std::string> path, std::optional<py::bytes> data,
    std::string format, std::string target, std::string cpu,
    std::string cudaArch, std::string moduleName, std::string functionName,
    std::string externalDataRoot, std::vector<std::string> dimPins,
    std::vector<std::string> shapePins, std::vector<std::string> valuePins,
    std::optional<int64_t> maxTensorBytes, std::optional<int64_t> maxTensorRank,
    std::optional<int64_t> maxNodes, bool timing, bool progress) {
  using strata::compiler::CompileSource;
  CompileSource source =
      data ? CompileSource::fromMemory(std::string(*data),
                                       path.value_or("<memory>"))
           : CompileSource::fromFile(path.value_or(""));
  if (format == "mlir")
    source.format = CompileSource::Format::MLIR;
  else if (format == "onnx")
    source.format = CompileSource::Format::ONNX;
  else if (!format.empty())
    throw py::value_error("format must be 'mlir', 'onnx' or None, not '" +
                          format + "'");

  strata::compiler::CompileOptions options;
  options.target = std::move(target);
  options.cpu = std::move(cpu);
  options.cudaArch = std::move(cudaArch);
  options.moduleName = std::move(moduleName);
  options.functionName = std::move(functionName);
  options.externalDataRoot = std::move(externalDataRoot);
  options.maxTensorBytes = maxTensorBytes;
  options.maxTensorRank = maxTensorRank;
  options.maxNodes = maxNodes;
  options.timing = timing;
  options.progress = progress;
  // The pins are parsed as strata-compile parses its flags, with the same
  // checks and messages.
  std::string error;
  for (const std::string &pin : dimPins)
    if (!strata::parseDimPin(pin, options.pins, error))
      throw py::value_error("dims: " + error);
  for (const std::string &pin : shapePins)
    if (!strata::parseInputShapePin(pin, options.pins, error))
      throw py::value_error("input_shapes: " + error);
  for (const std::string &pin : valuePins)
    if (!strata::parseInputValuePin(pin, options.pins, error))
      throw py::value_error("input_values: " + error);

  strata::compiler::CompileResult result;
  {
    py::gil_scoped_release release;
    result = strata::compiler::compile(source, options);
  }
  py::list diagnostics;
  for (const strata::compiler::Diagnostic &diagnostic : result.diagnostics)
    diagnostics.append(py::make_tuple(
        strata::compiler::Diagnostic::getSeverityName(diagnostic.severity),
        diagnostic.file, diagnostic.line, diagnostic.column, diagnostic.message,
        diagnostic.name));
  return py::make_tuple(result.ok(), py::bytes(result.moduleBytes),
                        diagnostics);
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

// Raises RuntimeError with the status's message (and frees it).
void check(strata_status_t status) {
  if (!status)
    return;
  std::string message = strata_status_message(status);
  strata_status_free(status);
  throw std::runtime_error(message);
}

// The numpy dtype of an element type; None for one numpy lacks (bf16).
py::object getDtype(strata_element_type_t type) {
  const char *name = nullptr;
  switch (type) {
  case STRATA_ELEMENT_TYPE_BOOL_8:
    name = "bool";
    break;
  case STRATA_ELEMENT_TYPE_SINT_8:
    name = "int8";
    break;
  case STRATA_ELEMENT_TYPE_SINT_16:
    name = "int16";
    break;
  case STRATA_ELEMENT_TYPE_SINT_32:
    name = "int32";
    break;
  case STRATA_ELEMENT_TYPE_SINT_64:
    name = "int64";
    break;
  case STRATA_ELEMENT_TYPE_UINT_8:
    name = "uint8";
    break;
  case STRATA_ELEMENT_TYPE_UINT_16:
    name = "uint16";
    break;
  case STRATA_ELEMENT_TYPE_UINT_32:
    name = "uint32";
    break;
  case STRATA_ELEMENT_TYPE_UINT_64:
    name = "uint64";
    break;
  case STRATA_ELEMENT_TYPE_FLOAT_16:
    name = "float16";
    break;
  case STRATA_ELEMENT_TYPE_FLOAT_32:
    name = "float32";
    break;
  case STRATA_ELEMENT_TYPE_FLOAT_64:
    name = "float64";
    break;
  default:
    return py::none();
  }
  return py::dtype(name);
}

// The element type of a numpy dtype; 0 when the runtime has none.
strata_element_type_t getElementType(const py::dtype &dtype) {
  char kind = dtype.kind();
  size_t bits = dtype.itemsize() * 8;
  switch (kind) {
  case 'b':
    return STRATA_ELEMENT_TYPE_BOOL_8;
  case 'i':
    return 0x11000000u | bits;
  case 'u':
    return 0x12000000u | bits;
  case 'f':
    return bits == 16 || bits == 32 || bits == 64 ? 0x21000000u | bits : 0;
  default:
    return 0;
  }
}

// "float32", or "bfloat16" / "0x..." for types numpy lacks.
std::string getTypeName(strata_element_type_t type) {
  py::object dtype = getDtype(type);
  if (!dtype.is_none())
    return py::str(dtype);
  if (type == STRATA_ELEMENT_TYPE_BFLOAT_16)
    return "bfloat16";
  std::ostringstream os;
  os << "element type 0x" << std::hex << type;
  return os.str();
}

// One argument or result as the module describes it.
struct TensorInfo {
  std::string name;
  strata_element_type_t elementType = 0;
  std::vector<int64_t> dims; // -1: dynamic
};

// "(None, 4)" as Python prints the shape tuple.
std::string formatShape(const std::vector<int64_t> &dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      text += ", ";
    text += dims[i] < 0 ? "None" : std::to_string(dims[i]);
  }
  if (dims.size() == 1)
    text += ",";
  return text + ")";
}

py::tuple describe(const TensorInfo &info) {
  py::list shape;
  for (int64_t dim : info.dims)
    shape.append(dim < 0 ? py::object(py::none()) : py::int_(dim));
  return py::make_tuple(info.name, getDtype(info.elementType),
                        py::tuple(shape));
}

// The instance, device and session one loaded module runs in.
class Session {
public:
  Session(const std::string &deviceUri) {
    try {
      check(strata_instance_create(&instance));
      check(strata_device_create(instance, deviceUri.c_str(), &device));
      check(strata_session_create(instance, device, &session));
    } catch (...) {
      release();
      throw;
    }
  }
  ~Session() { release(); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  void appendModuleFromFile(const std::string &path) {
    check(strata_session_append_module_from_file(session, path.c_str()));
  }
  // The bytes are copied into memory aligned for the module's rodata; the
  // runtime frees it when done with it.
  void appendModuleFromBytes(const py::bytes &bytes) {
    std::string_view view = bytes;
    size_t size = (view.size() + 63) / 64 * 64;
    void *data = std::aligned_alloc(64, size == 0 ? 64 : size);
    if (!data)
      throw std::bad_alloc();
    std::memcpy(data, view.data(), view.size());
    check(strata_session_append_module_from_memory(
        session, data, view.size(),
        [](void *, const void *data, size_t) {
          std::free(const_cast<void *>(data));
        },
        nullptr));
  }
  std::vector<std::string> getFunctionNames() const {
    std::vector<std::string> names;
    size_t count = strata_session_function_count(session);
    for (size_t i = 0; i < count; ++i) {
      const char *name = nullptr;
      check(strata_session_function_name(session, i, &name));
      names.push_back(name);
    }
    return names;
  }

  strata_session_t *get() const { return session; }
  // A session runs one call at a time (runtime.h); Python threads calling
  // its functions with the GIL released take turns here.
  std::mutex &getCallMutex() { return callMutex; }

private:
  void release() {
    // The device's workers may still hold inputs whose release takes the
    // GIL.
    py::gil_scoped_release unlock;
    strata_session_release(session);
    strata_device_release(device);
    strata_instance_release(instance);
  }

  std::mutex callMutex;
  strata_instance_t *instance = nullptr;
  strata_device_t *device = nullptr;
  strata_session_t *session = nullptr;
};

// Keeps a numpy array alive while the runtime uses its memory.
void releaseArray(void *userData, const void *, size_t) {
  // Interpreter shutdown: the array goes with it.
#if PY_VERSION_HEX >= 0x030D0000
  bool finalizing = Py_IsFinalizing();
#else
  bool finalizing = _Py_IsFinalizing();
#endif
  if (!Py_IsInitialized() || finalizing)
    return;
  py::gil_scoped_acquire acquire;
  Py_DECREF(static_cast<PyObject *>(userData));
}

// A function of a loaded module: callable with numpy arrays.
class Function {
public:
  Function(std::shared_ptr<Session> session, const std::string &name)
      : session(std::move(session)) {
    check(strata_session_lookup_function(this->session->get(), name.c_str(),
                                         &function));
    this->name = strata_function_name(function);
    size_t inputCount = strata_function_input_count(function);
    size_t outputCount = strata_function_output_count(function);
    // Without reflection (a hand-written VM module) the arrays' own types
    // and shapes go in, and the runtime checks them.
    hasReflection = true;
    for (size_t i = 0; i < inputCount && hasReflection; ++i)
      hasReflection = readInfo(strata_function_input_info, i, inputs);
    for (size_t i = 0; i < outputCount && hasReflection; ++i)
      hasReflection = readInfo(strata_function_output_info, i, outputs);
    if (!hasReflection) {
      inputs.assign(inputCount, TensorInfo());
      outputs.assign(outputCount, TensorInfo());
    }
  }
  ~Function() { strata_function_release(function); }
  Function(const Function &) = delete;
  Function &operator=(const Function &) = delete;

  const std::string &getName() const { return name; }

  py::object describeAll(const std::vector<TensorInfo> &infos) const {
    if (!hasReflection)
      return py::none();
    py::list list;
    for (const TensorInfo &info : infos)
      list.append(describe(info));
    return list;
  }
  py::object getInputs() const { return describeAll(inputs); }
  py::object getOutputs() const { return describeAll(outputs); }

  std::string repr() const {
    std::string text = "<strata.Function " + name + "(";
    auto append = [&](const std::vector<TensorInfo> &infos) {
      for (size_t i = 0; i < infos.size(); ++i) {
        if (i)
          text += ", ";
        if (!hasReflection) {
          text += "?";
          continue;
        }
        if (!infos[i].name.empty())
          text += infos[i].name + ": ";
        text += getTypeName(infos[i].elementType) + formatShape(infos[i].dims);
      }
    };
    append(inputs);
    text += ") -> (";
    append(outputs);
    return text + ")>";
  }

  py::object call(const py::args &args) {
    if (args.size() != inputs.size()) {
      std::string names;
      for (size_t i = 0; i < inputs.size(); ++i)
        names += (i ? ", " : "") + describeArgument(i);
      throw py::type_error(name + "() takes " + std::to_string(inputs.size()) +
                           " argument" + (inputs.size() == 1 ? "" : "s") +
                           (names.empty() ? "" : " (" + names + ")") +
                           ", got " + std::to_string(args.size()));
    }
    // Views released when the call ends, whatever happens (those still in
    // the list: a result handed to its array leaves it).
    struct Views {
      std::vector<strata_buffer_view_t *> list;
      ~Views() { clear(); }
      void clear() {
        for (strata_buffer_view_t *view : list)
          strata_buffer_view_release(view);
        list.clear();
      }
    } inputViews, outputViews;
    for (size_t i = 0; i < args.size(); ++i)
      inputViews.list.push_back(importArgument(i, args[i]));

    outputViews.list.assign(outputs.size(), nullptr);
    size_t outputCount = 0;
    strata_status_t status;
    {
      py::gil_scoped_release release;
      status =
          strata_session_call(session->get(), function, inputViews.list.data(),
                              inputViews.list.size(), outputViews.list.data(),
                              outputViews.list.size(), &outputCount);
    }
    check(status);
    outputViews.list.resize(outputCount);
    // The inputs go first: a result that is an input (or views one) may
    // then be the caller's alone, and is not copied.
    inputViews.clear();

    py::list results;
    for (strata_buffer_view_t *&view : outputViews.list)
      results.append(readResult(view));
    if (results.size() == 1)
      return results[0];
    return py::tuple(results);
  }

private:
  using InfoFn = strata_status_t (*)(const strata_function_t *, size_t,
                                     strata_tensor_info_t *);
  bool readInfo(InfoFn fn, size_t index, std::vector<TensorInfo> &infos) {
    strata_tensor_info_t info;
    strata_status_t status = fn(function, index, &info);
    if (status) {
      bool noReflection =
          strata_status_code(status) == STRATA_STATUS_FAILED_PRECONDITION;
      if (noReflection) {
        strata_status_free(status);
        return false;
      }
      check(status);
    }
    TensorInfo tensor;
    tensor.name = info.name ? info.name : "";
    tensor.elementType = info.element_type;
    tensor.dims.assign(info.dims, info.dims + info.rank);
    infos.push_back(std::move(tensor));
    return true;
  }

  // "argument 0 ('x')" or "argument 0".
  std::string describeArgument(size_t index) const {
    std::string text = "argument " + std::to_string(index);
    if (!inputs[index].name.empty())
      text += " ('" + inputs[index].name + "')";
    return text;
  }

  strata_buffer_view_t *importArgument(size_t index, py::handle value) {
    const TensorInfo &info = inputs[index];
    std::string what = name + ": " + describeArgument(index);
    py::module_ numpy = py::module_::import("numpy");
    py::array array;
    if (py::isinstance<py::array>(value)) {
      array = py::reinterpret_borrow<py::array>(value);
    } else {
      // A list or scalar takes the declared element type.
      py::object dtype =
          hasReflection ? getDtype(info.elementType) : py::object(py::none());
      array = numpy.attr("asarray")(value, dtype);
    }
    // Bytes in the other order are swapped into this machine's (a copy).
    if (!array.dtype().attr("isnative").cast<bool>())
      array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
    strata_element_type_t elementType = getElementType(array.dtype());
    if (hasReflection) {
      if (elementType != info.elementType)
        throw py::value_error(what + ": expected dtype " +
                              getTypeName(info.elementType) + ", got " +
                              std::string(py::str(array.dtype())));
      std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
      bool matches = shape.size() == info.dims.size();
      for (size_t d = 0; matches && d < shape.size(); ++d)
        matches = info.dims[d] < 0 || info.dims[d] == shape[d];
      if (!matches) {
        std::string expected = formatShape(info.dims);
        std::string got = formatShape(shape);
        if (shape.size() != info.dims.size())
          throw py::value_error(what + ": expected rank " +
                                std::to_string(info.dims.size()) + " " +
                                expected + ", got rank " +
                                std::to_string(shape.size()) + " " + got);
        throw py::value_error(what + ": expected shape " + expected + ", got " +
                              got);
      }
    } else if (elementType == 0) {
      throw py::value_error(what + ": dtype " +
                            std::string(py::str(array.dtype())) +
                            " has no runtime element type");
    }
    // Row-major and contiguous; a copy only when it is not already.
    array = numpy.attr("ascontiguousarray")(array);
    std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    PyObject *owner = array.ptr();
    Py_INCREF(owner);
    strata_buffer_view_t *view = nullptr;
    strata_status_t status = strata_buffer_view_import(
        session->get(), shape.data(), shape.size(), elementType, array.data(),
        static_cast<size_t>(array.nbytes()), releaseArray, owner, &view);
    if (status) {
      std::string message = strata_status_message(status);
      strata_status_free(status);
      throw std::runtime_error(what + ": " + message);
    }
    return view;
  }

  // A numpy array of the result: its own memory, owned by the array from
  // then on (`view` is handed to the array's base and set to null), where
  // the runtime says it is the caller's alone; otherwise a copy. Copied
  // are a module's constants, inputs (imported numpy memory), globals, a
  // result returned twice and memory the host cannot map.
  py::array readResult(strata_buffer_view_t *&view) {
    strata_element_type_t type = strata_buffer_view_element_type(view);
    py::object dtype = getDtype(type);
    // bfloat16 comes back as its bits.
    if (dtype.is_none() && type == STRATA_ELEMENT_TYPE_BFLOAT_16)
      dtype = py::dtype("uint16");
    if (dtype.is_none())
      throw std::runtime_error(name + ": a result of " + getTypeName(type) +
                               " has no numpy dtype");
    std::vector<py::ssize_t> shape;
    for (size_t d = 0, rank = strata_buffer_view_rank(view); d < rank; ++d)
      shape.push_back(strata_buffer_view_dim(view, d));
    void *data = nullptr;
    if (strata_buffer_view_byte_length(view) != 0)
      check(strata_buffer_view_exclusive_host_data(view, &data));
    if (data) {
      py::capsule owner(view, [](void *owned) {
        strata_buffer_view_release(static_cast<strata_buffer_view_t *>(owned));
      });
      view = nullptr;
      return py::array(py::reinterpret_borrow<py::dtype>(dtype), shape, data,
                       owner);
    }
    py::array result(py::reinterpret_borrow<py::dtype>(dtype), shape);
    check(strata_buffer_view_read(view, result.mutable_data(),
                                  static_cast<size_t>(result.nbytes())));
    return result;
  }

  std::shared_ptr<Session> session;
  strata_function_t *function = nullptr;
  std::string name;
  bool hasReflection = false;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

} // namespace

PYBIND11_MODULE(_strata, m) {
  m.doc() = "Strata's compiler and runtime (use the strata package)";
  m.attr("__version__") = STRATA_VERSION_STRING;
  m.attr("git_commit") = STRATA_GIT_COMMIT;

  m.def("_compile", &compileProgram, py::arg("path"), py::arg("data"),
        py::arg("format"), py::arg("target"), py::arg("cpu"),
        py::arg("cuda_arch"), py::arg("module_name"), py::arg("function_name"),
        py::arg("external_data_root"), py::arg("dim_pins"),
        py::arg("shape_pins"), py::arg("value_pins"),
        py::arg("max_tensor_bytes"), py::arg("max_tensor_rank"),
        py::arg("max_nodes"), py::arg("timing"), py::arg("progress"));
  m.def("phase_names", &strata::compiler::getPhaseNames,
        "The compiler's phases, in order");

  py::class_<Session, std::shared_ptr<Session>>(m, "Session")
      .def(py::init<const std::string &>(), py::arg("device"))
      .def("append_module_from_file", &Session::appendModuleFromFile)
      .def("append_module_from_bytes", &Session::appendModuleFromBytes)
      .def("function_names", &Session::getFunctionNames);

  py::class_<Function>(m, "Function")
      .def(py::init<std::shared_ptr<Session>, const std::string &>(),
           py::arg("session"), py::arg("name"))
      .def_property_readonly("name", &Function::getName)
      .def_property_readonly("inputs", &Function::getInputs,
                             "[(name, numpy dtype, shape)]; None for a "
                             "dynamic dim")
      .def_property_readonly("outputs", &Function::getOutputs)
      .def("__call__", &Function::call)
      .def("__repr__", &Function::repr);
}
