//===- HALOps.td - host program on explicit buffers --------*- tablegen -*-===//
//
// The hal dialect is the host program after tensors became buffers: every op
// maps onto one import of the runtime's `hal` native module
// (runtime/src/strata/modules/hal/hal_imports.def), named by `importName`.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_HAL_OPS
#define STRATA_HAL_OPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def HAL_Dialect : Dialect {
  let name = "hal";
  let cppNamespace = "::strata::hal";
  let summary = "Devices, buffers, command buffers and executables";
  let useDefaultTypePrinterParser = 1;
}

class HAL_Type<string name, string typeMnemonic>
    : TypeDef<HAL_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def HAL_Device : HAL_Type<"Device", "device">;
def HAL_Allocator : HAL_Type<"Allocator", "allocator">;
def HAL_Buffer : HAL_Type<"Buffer", "buffer">;
def HAL_BufferView : HAL_Type<"BufferView", "buffer_view">;
def HAL_CommandBuffer : HAL_Type<"CommandBuffer", "command_buffer">;
def HAL_Executable : HAL_Type<"Executable", "executable">;
def HAL_Fence : HAL_Type<"Fence", "fence">;

class HAL_Op<string mnemonic, list<Trait> traits = []>
    : Op<HAL_Dialect, mnemonic, traits>;

// An op that lowers to one call of the `hal` module import `importName`,
// operands in order; variadic operand groups become variadic segments.
class HAL_ImportOp<string mnemonic, string importName,
                   list<Trait> traits = []>
    : HAL_Op<mnemonic, traits> {
  let extraClassDeclaration = [{
    static ::llvm::StringRef getImportName() { return "}] # importName # [{"; }
  }];
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def HAL_DevicesGetOp : HAL_ImportOp<"devices.get", "hal.devices.get"> {
  let arguments = (ins I32:$index);
  let results = (outs HAL_Device:$device);
}

def HAL_DeviceAllocatorOp
    : HAL_ImportOp<"device.allocator", "hal.device.allocator"> {
  let arguments = (ins HAL_Device:$device);
  let results = (outs HAL_Allocator:$allocator);
}

def HAL_DeviceQueueExecuteOp
    : HAL_ImportOp<"device.queue.execute", "hal.device.queue.execute"> {
  let arguments = (ins HAL_Device:$device, I64:$queue_affinity,
                       HAL_Fence:$wait_fence, HAL_Fence:$signal_fence,
                       Variadic<HAL_CommandBuffer>:$command_buffers);
}

def HAL_AllocatorAllocateOp
    : HAL_ImportOp<"allocator.allocate", "hal.allocator.allocate"> {
  let arguments = (ins HAL_Allocator:$allocator, I64:$queue_affinity,
                       I32:$memory_types, I32:$buffer_usage, I64:$size);
  let results = (outs HAL_Buffer:$buffer);
}

def HAL_BufferLoadOp : HAL_ImportOp<"buffer.load", "hal.buffer.load"> {
  let summary = "Reads an integer of `length` bytes from a buffer on the host";
  let description = [{
    The bytes at `offset` as a little-endian integer, zero-extended to i64:
    a tensor value the host program needs (a size computed from data). The
    commands writing the buffer must have completed.
  }];
  let arguments = (ins HAL_Buffer:$buffer, I64:$offset, I32:$length);
  let results = (outs I64:$value);
}

def HAL_BufferViewCreateOp
    : HAL_ImportOp<"buffer_view.create", "hal.buffer_view.create"> {
  let arguments = (ins HAL_Buffer:$buffer, I64:$offset, I64:$length,
                       I32:$element_type, I32:$encoding_type,
                       Variadic<I64>:$dims);
  let results = (outs HAL_BufferView:$view);
}

def HAL_BufferViewBufferOp
    : HAL_ImportOp<"buffer_view.buffer", "hal.buffer_view.buffer"> {
  let arguments = (ins HAL_BufferView:$view);
  let results = (outs HAL_Buffer:$buffer);
}

def HAL_BufferViewDimOp
    : HAL_ImportOp<"buffer_view.dim", "hal.buffer_view.dim"> {
  let summary = "One dim of a view's shape (fails when out of its rank)";
  let arguments = (ins HAL_BufferView:$view, I32:$index);
  let results = (outs I64:$dim);
}

def HAL_BufferViewAssertOp : HAL_Op<"buffer_view.assert"> {
  let summary = "Fails the call when a view does not have the given type";
  let arguments = (ins HAL_BufferView:$view, StrAttr:$message,
                       I32:$element_type, I32:$encoding_type,
                       Variadic<I64>:$dims);
  let assemblyFormat = [{
    $view `message` `(` $message `)` `element_type` `(` $element_type `)`
    `encoding` `(` $encoding_type `)` `shape` `(` `[` $dims `]` `)` attr-dict
  }];
}

def HAL_CommandBufferCreateOp
    : HAL_ImportOp<"command_buffer.create", "hal.command_buffer.create"> {
  let arguments = (ins HAL_Device:$device, I32:$modes, I32:$categories,
                       I64:$queue_affinity, I32:$binding_capacity);
  let results = (outs HAL_CommandBuffer:$command_buffer);
}

def HAL_CommandBufferFinalizeOp
    : HAL_ImportOp<"command_buffer.finalize", "hal.command_buffer.finalize"> {
  let arguments = (ins HAL_CommandBuffer:$command_buffer);
}

def HAL_CommandBufferExecutionBarrierOp
    : HAL_ImportOp<"command_buffer.execution_barrier",
                   "hal.command_buffer.execution_barrier"> {
  let arguments = (ins HAL_CommandBuffer:$command_buffer, I32:$source_stage,
                       I32:$target_stage, I32:$flags);
}

def HAL_CommandBufferDispatchOp : HAL_Op<"command_buffer.dispatch",
                                         [AttrSizedOperandSegments]> {
  let summary = "Records a dispatch of an executable export";
  let description = [{
    Bindings are (buffer, byte offset, byte length) triples, in the order of
    the export's arguments followed by its results.
  }];
  let arguments = (ins HAL_CommandBuffer:$command_buffer,
                       HAL_Executable:$executable, I32:$export_ordinal,
                       I32:$workgroup_x, I32:$workgroup_y, I32:$workgroup_z,
                       I64:$flags, Variadic<I32>:$constants,
                       Variadic<HAL_Buffer>:$binding_buffers,
                       Variadic<I64>:$binding_offsets,
                       Variadic<I64>:$binding_lengths);
  let assemblyFormat = [{
    $command_buffer `,` $executable `[` $export_ordinal `]`
    `workgroups` `(` $workgroup_x `,` $workgroup_y `,` $workgroup_z `)`
    `flags` `(` $flags `)` (`constants` `(` $constants^ `)`)?
    `bindings` `(` $binding_buffers `)` `offsets` `(` $binding_offsets `)`
    `lengths` `(` $binding_lengths `)` attr-dict
  }];
  let hasVerifier = 1;
}

def HAL_ExecutableLookupOp : HAL_Op<"executable.lookup", [Pure]> {
  let summary = "The device's loaded form of an executable";
  let arguments = (ins FlatSymbolRefAttr:$executable);
  let results = (outs HAL_Executable:$result);
  let assemblyFormat = "$executable attr-dict `:` type($result)";
}

def HAL_ExecutableBinaryOp : HAL_Op<"executable.binary", [Symbol]> {
  let summary = "A compiled executable for one target format";
  let description = [{
    `data` holds the target's binary (for `elf-x86_64`, a position
    independent shared object implementing the executable library ABI).
    `required_cpu_features` lists the instruction set extensions
    (runtime/src/strata/hal/local/cpu_features.def) the code was compiled
    for; the module refuses to initialize on a CPU without them.

    An executable compiled for several CPUs (`--cpu=x86-64-v3,x86-64-v4`)
    has one binary per CPU: the first carries the executable's name, the
    others name it in `variant_of`, all in the same order for every
    executable. At initialization the module loads the variant with the
    most required features that the CPU has.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$format,
                       ElementsAttr:$data,
                       DenseI64ArrayAttr:$export_binding_counts,
                       OptionalAttr<StrArrayAttr>:$required_cpu_features,
                       OptionalAttr<FlatSymbolRefAttr>:$variant_of);
  let assemblyFormat = "$sym_name `format` `(` $format `)` attr-dict";
  let builders = [
    // The binary of a target's compiled bytes (stored as vector<Nxi8>),
    // with one export.
    OpBuilder<(ins "::llvm::StringRef":$symName, "::llvm::StringRef":$format,
                   "::llvm::ArrayRef<char>":$bytes, "int64_t":$bindingCount,
                   "::llvm::ArrayRef<::llvm::StringRef>":$requiredCpuFeatures,
                   "::mlir::FlatSymbolRefAttr":$variantOf), [{
      auto type = ::mlir::VectorType::get(
          {static_cast<int64_t>(bytes.size())}, $_builder.getIntegerType(8));
      build($_builder, $_state, $_builder.getStringAttr(symName),
            $_builder.getStringAttr(format),
            ::mlir::DenseElementsAttr::getFromRawBuffer(type, bytes),
            $_builder.getDenseI64ArrayAttr({bindingCount}),
            $_builder.getStrArrayAttr(requiredCpuFeatures), variantOf);
    }]>
  ];
}

def HAL_ConstantBufferOp : HAL_Op<"constant_buffer", [Pure]> {
  let summary = "A read-only buffer holding constant data";
  let description = [{
    The data is stored once in the module file and the buffer views it in
    place (no copy per call).
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs HAL_Buffer:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

def HAL_CommandBufferCopyBufferOp
    : HAL_ImportOp<"command_buffer.copy_buffer",
                   "hal.command_buffer.copy_buffer"> {
  let arguments = (ins HAL_CommandBuffer:$command_buffer,
                       HAL_Buffer:$source, I64:$source_offset,
                       HAL_Buffer:$target, I64:$target_offset, I64:$length);
}

def HAL_FenceCreateOp : HAL_ImportOp<"fence.create", "hal.fence.create"> {
  let arguments = (ins HAL_Device:$device, I32:$flags);
  let results = (outs HAL_Fence:$fence);
}

def HAL_FenceAwaitOp : HAL_ImportOp<"fence.await", "hal.fence.await"> {
  let arguments = (ins I32:$timeout_millis, Variadic<HAL_Fence>:$fences);
  let results = (outs I32:$status);
}

def HAL_NullFenceOp : HAL_Op<"fence.null", [Pure]> {
  let summary = "No fence (e.g. nothing to wait on)";
  let results = (outs HAL_Fence:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

#endif // STRATA_HAL_OPS
