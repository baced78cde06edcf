# fuzz.cmake: libFuzzer targets for the readers of untrusted files (issue #18 item 5),
# tests/fuzz/fuzz_<target>.c. Included before the libraries are defined, because in this
# mode every library is compiled with coverage and the sanitizers.
#
# DSE_FUZZ=OFF (default) | AUTO | ON. ON needs a compiler with libFuzzer (clang): it adds
# -fsanitize=fuzzer-no-link,address,undefined to every object, defines DSE_SANITIZED (so
# base/base.c's ASan options and netfile/cfgfile.c's LeakSanitizer suppression of libconfig's
# parser leak apply), and builds the fuzz_* programs, linked with -fsanitize=fuzzer. AUTO
# is ON where the compiler has libFuzzer, OFF elsewhere (GCC). Use a build folder of its
# own: tools/fuzz configures build-fuzz with CC=clang and -DDSE_FUZZ=ON.
set(DSE_FUZZ OFF CACHE STRING "libFuzzer targets (clang): OFF, AUTO or ON")
set_property(CACHE DSE_FUZZ PROPERTY STRINGS OFF AUTO ON)

set(DSE_FUZZ_TARGETS prototxt onnx netcfg space json candidate sweep ckpt_info ckpt_load image pack dsez)

if(NOT DSE_FUZZ STREQUAL "OFF")
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
    check_c_source_compiles(
        "#include <stddef.h>
         #include <stdint.h>
         int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return (int)(d == 0 && n == 1); }"
        DSE_HAVE_LIBFUZZER)
    unset(CMAKE_REQUIRED_FLAGS)
    if(NOT DSE_HAVE_LIBFUZZER)
        if(DSE_FUZZ STREQUAL "ON")
            message(FATAL_ERROR "DSE_FUZZ=ON: ${CMAKE_C_COMPILER_ID} cannot link -fsanitize=fuzzer "
                                "(configure with CC=clang: tools/fuzz)")
        endif()
        message(STATUS "fuzz targets: not built (${CMAKE_C_COMPILER_ID} has no libFuzzer)")
    else()
        message(STATUS "fuzz targets: ${DSE_FUZZ_TARGETS}")
        set(_san -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                 -fno-omit-frame-pointer)
        add_compile_options(${_san})
        add_link_options(-fsanitize=address,undefined)
        add_compile_definitions(DSE_SANITIZED=1)
        # The CPU's matrix kernels (engine/cpu/mm.c: ~140 always-inline instantiations of
        # unrolled tiles) took clang over 10 minutes to instrument, and no fuzzed reader runs
        # a conv: they are compiled plain here (5 s). The ASan+UBSan build still checks them.
        set_source_files_properties(${CMAKE_SOURCE_DIR}/engine/cpu/mm.c PROPERTIES COMPILE_OPTIONS -fno-sanitize=all)
        foreach(_t ${DSE_FUZZ_TARGETS})
            # dse_cli is defined later; CMake resolves the name when it generates.
            add_executable(fuzz_${_t} ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_${_t}.c)
            target_link_libraries(fuzz_${_t} PRIVATE dse_cli)
            target_include_directories(fuzz_${_t} PRIVATE ${CMAKE_SOURCE_DIR})
            target_link_options(fuzz_${_t} PRIVATE -fsanitize=fuzzer)
        endforeach()
        add_custom_target(fuzz)
        foreach(_t ${DSE_FUZZ_TARGETS})
            add_dependencies(fuzz fuzz_${_t})
        endforeach()
    endif()
endif()
