# Fails the build where a file includes another by a relative path that leaves its folder
# ("../ranks/mpi.hpp"): the one kind of include the layers' include roots (CMakeLists.txt,
# strata_layer) cannot refuse, since the compiler resolves it from the including file's folder.
# Run by the build (cmake -P) whenever a source changes; writes STAMP when every file passes.
file(GLOB_RECURSE files RELATIVE ${ROOT}
     ${ROOT}/src/* ${ROOT}/include/strata/* ${ROOT}/tests/*.cpp ${ROOT}/tests/*.cu ${ROOT}/tests/*.hpp
     ${ROOT}/python/*.cpp ${ROOT}/fuzz/*.cpp ${ROOT}/bench/*.cpp ${ROOT}/bench/*.cu ${ROOT}/examples/*.cpp)
set(found "")
foreach(file IN LISTS files)
  file(STRINGS ${ROOT}/${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]*\\.\\./")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    string(APPEND found "\n  ${file}: ${line}")
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "strata: includes that climb out of their folder by a relative path; name the header "
                      "from its layer's root instead (\"ranks/mpi.hpp\"), which only the layers above it see:${found}")
endif()
file(TOUCH ${STAMP})
