// Version skew between the compiler that built a module and this runtime is
// an error that says what the module was built for and what the runtime
// supports, through the session a user loads modules with: schema version,
// bytecode version and the `hal` module version. (The executable library
// ABI version is checked by every local loader: hal_executable_test's
// RejectsBadLibraries.)
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "module_builder.h"
#include "strata/hal/abi_enums.h"
#include "strata/session/session.h"
#include "strata/vm/bytecode.h"
#include "vm_test_util.h"

namespace strata {
namespace {

using ::testing::HasSubstr;
using vm::testing::FunctionBuilder;
using vm::testing::ModuleBuilder;

ModuleBuilder MinimalModule() {
  ModuleBuilder builder("skewed");
  FunctionBuilder &f = builder.AddFunction("f", "0v_v", {});
  f.Op(vm::Opcode::Return).List({});
  builder.AddExport("f", f.ordinal());
  return builder;
}

Status Append(const ModuleBuilder &builder) {
  STRATA_ASSIGN_OR_RETURN(auto instance, session::Instance::Create());
  STRATA_ASSIGN_OR_RETURN(auto device, instance->CreateDevice("local-sync"));
  STRATA_ASSIGN_OR_RETURN(auto session,
                          session::Session::Create(instance, device, {}));
  return session->AppendBytecodeModuleFromMemory(builder.BuildOwned());
}

TEST(VersionSkewTest, CurrentVersionsLoad) {
  STRATA_EXPECT_OK(Append(MinimalModule()));
  ModuleBuilder builder = MinimalModule();
  builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION);
  STRATA_EXPECT_OK(Append(builder));
}

TEST(VersionSkewTest, SchemaVersion) {
  for (uint32_t version : {vm::kSchemaVersion + 1, vm::kSchemaVersion - 1}) {
    ModuleBuilder builder = MinimalModule();
    builder.schema_version = version;
    Status status = Append(builder);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(StrCat("module built for schema version ", version,
                                 ", runtime supports ", vm::kSchemaVersion)));
  }
}

TEST(VersionSkewTest, BytecodeVersion) {
  for (uint32_t version :
       {vm::kBytecodeVersion + 1, vm::kMinBytecodeVersion - 1}) {
    ModuleBuilder builder = MinimalModule();
    builder.bytecode_version = version;
    Status status = Append(builder);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(StrCat("module built for bytecode version ", version,
                                 ", runtime supports versions ",
                                 vm::kMinBytecodeVersion, " to ",
                                 vm::kBytecodeVersion)));
  }
}

TEST(VersionSkewTest, HalModuleVersion) {
  ModuleBuilder builder = MinimalModule();
  builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION + 1);
  Status status = Append(builder);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(StrCat("module 'skewed' requires 'hal' >= ",
                               STRATA_HAL_MODULE_VERSION + 1,
                               " but 'hal' "
                               "version ",
                               STRATA_HAL_MODULE_VERSION, " is registered")));
}

} // namespace
} // namespace strata
