# cmake -DINPUT=file -DOUTPUT=file.cpp -P Embed.cmake: the bytes of INPUT as
# strata::kExecutableHelpersArchive (ExecutableHelpers.h).
file(READ ${INPUT} _hex HEX)
string(LENGTH "${_hex}" _length)
math(EXPR _size "${_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" _bytes "${_bytes}")
file(WRITE ${OUTPUT}
"// Generated from ${INPUT} by Embed.cmake.\n"
"#include <cstddef>\n\n"
"namespace strata {\n"
"extern const unsigned char kExecutableHelpersArchive[];\n"
"extern const size_t kExecutableHelpersArchiveSize;\n"
"const unsigned char kExecutableHelpersArchive[] = {\n${_bytes}};\n"
"const size_t kExecutableHelpersArchiveSize = ${_size};\n"
"} // namespace strata\n")
