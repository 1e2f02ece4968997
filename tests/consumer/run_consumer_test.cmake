# Checks that an installed kingman works for an outside CMake project.
#   cmake -DKINGMAN_BINARY_DIR=<kingman build dir> -DCONSUMER_SOURCE_DIR=<tests/consumer>
#         -DCONSUMER_BINARY_DIR=<scratch build dir> -DINSTALL_PREFIX=<scratch prefix>
#         -P run_consumer_test.cmake
# Installs the kingman build into INSTALL_PREFIX, configures tests/consumer against it with
# CMAKE_PREFIX_PATH, builds it and runs the program. Any failure is a FATAL_ERROR that shows
# the failing step's output. The consumer uses the same generator, compiler and build type as
# the kingman build, and the same sanitizer runtime when kingman was built with one.
cmake_minimum_required(VERSION 3.22)

foreach(var KINGMAN_BINARY_DIR CONSUMER_SOURCE_DIR CONSUMER_BINARY_DIR INSTALL_PREFIX)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()

# Value of one entry of the kingman build's CMakeCache.txt, or "" if absent.
function(kingman_cache_value name out)
  set(value "")
  if(EXISTS "${KINGMAN_BINARY_DIR}/CMakeCache.txt")
    file(STRINGS "${KINGMAN_BINARY_DIR}/CMakeCache.txt" lines REGEX "^${name}:[A-Z]+=")
    if(lines)
      list(GET lines 0 line)
      string(REGEX REPLACE "^${name}:[A-Z]+=" "" value "${line}")
    endif()
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Runs one step; on failure stops with the step's name, command and output.
function(kingman_run_step step)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "package_consumer: ${step} failed (${result})\n"
                        "command: ${command}\n${output}")
  endif()
  message(STATUS "package_consumer: ${step}: ok")
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

kingman_cache_value(CMAKE_BUILD_TYPE build_type)
kingman_cache_value(CMAKE_GENERATOR generator)
kingman_cache_value(CMAKE_CXX_COMPILER cxx_compiler)
kingman_cache_value(KINGMAN_SANITIZER sanitizer)
if(build_type STREQUAL "")
  set(build_type Release)
endif()

file(REMOVE_RECURSE "${INSTALL_PREFIX}" "${CONSUMER_BINARY_DIR}")

kingman_run_step("install"
  ${CMAKE_COMMAND} --install "${KINGMAN_BINARY_DIR}" --prefix "${INSTALL_PREFIX}"
  --config ${build_type})

set(configure_args
  -S "${CONSUMER_SOURCE_DIR}" -B "${CONSUMER_BINARY_DIR}"
  "-DCMAKE_PREFIX_PATH=${INSTALL_PREFIX}"
  "-DCMAKE_BUILD_TYPE=${build_type}")
if(NOT generator STREQUAL "")
  list(APPEND configure_args -G "${generator}")
endif()
if(NOT cxx_compiler STREQUAL "")
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${cxx_compiler}")
endif()
if(NOT sanitizer STREQUAL "")
  # kingman's static libraries were compiled with -fsanitize; the program must link its runtime.
  list(APPEND configure_args
    "-DCMAKE_CXX_FLAGS=-fsanitize=${sanitizer}"
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${sanitizer}")
endif()
kingman_run_step("configure consumer" ${CMAKE_COMMAND} ${configure_args})

kingman_run_step("build consumer"
  ${CMAKE_COMMAND} --build "${CONSUMER_BINARY_DIR}" --config ${build_type})

set(program "${CONSUMER_BINARY_DIR}/kingman_consumer")
if(NOT EXISTS "${program}" AND EXISTS "${CONSUMER_BINARY_DIR}/${build_type}/kingman_consumer")
  set(program "${CONSUMER_BINARY_DIR}/${build_type}/kingman_consumer")
endif()
kingman_run_step("run consumer" "${program}")
message(STATUS "${step_output}")
