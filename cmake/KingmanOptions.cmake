# Build switches. Each defaults to what a developer checkout wants.
option(KINGMAN_BUILD_APPS "Build the kingman command-line program" ON)
option(KINGMAN_BUILD_TESTS "Build the GoogleTest suite (ctest)" ON)
option(KINGMAN_BUILD_BENCH "Build the Google Benchmark binaries" ON)
option(KINGMAN_NATIVE "Compile for the host CPU (-march=native); off for portable binaries" OFF)
set(KINGMAN_SANITIZER "" CACHE STRING "Sanitizer for kingman's own targets: address, undefined, thread, or empty")
set_property(CACHE KINGMAN_SANITIZER PROPERTY STRINGS "" address undefined thread)
option(KINGMAN_FUZZ "Build the libFuzzer targets of tests/fuzz (Clang only; instruments every target)" OFF)
