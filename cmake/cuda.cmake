# cuda.cmake: the optional CUDA backend (issue #6), included near the end of
# CMakeLists.txt. engine/backend.c (the backend registry) joins dse_engine in every
# build. With DSE_CUDA=AUTO (the default) engine/cuda/ joins it too when CMake finds a
# CUDA compiler, the CUDA toolkit (cudart, cuBLAS) and cuDNN 9 (cmake/FindCUDNN.cmake:
# CUDNN_ROOT, PyTorch's site-packages/nvidia/cudnn, the toolkit, the system); ON makes
# them required, OFF leaves the backend out. Without it the CUDA API answers "built
# without CUDA" and everything else builds and tests the same.
#
# The sanitizer build (DSE_SANITIZE) leaves CUDA out unless DSE_CUDA=ON: ASan reserves
# the address ranges the CUDA driver maps (it needs ASAN_OPTIONS=protect_shadow_gap=0),
# nvcc does not take -fsanitize, and one nvcc compile per `sh tools/test` is enough.
#
# Only engine/cuda/kernels.cu goes through nvcc (one file: CI time); the backend's host
# code is C11 compiled like the rest, warnings and -Werror included. The kernels target
# drops the project's C warning flags (nvcc rejects -Wstrict-prototypes) and passes its
# own. CMAKE_CUDA_ARCHITECTURES defaults to 90 (H100, H200); bench/gpu_check.sh builds
# for the GPU it runs on. See docs/gpu.md.

set(DSE_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO (if CUDA and cuDNN are found), ON, OFF")
set_property(CACHE DSE_CUDA PROPERTY STRINGS AUTO ON OFF)
set(CUDNN_ROOT "" CACHE PATH "cuDNN prefix (include/, lib/), e.g. a site-packages/nvidia/cudnn folder")

# backend.c, the choice file's text and the shared choice pool (plain C, no CUDA: tested everywhere)
target_sources(dse_engine PRIVATE ${CMAKE_SOURCE_DIR}/engine/backend.c ${CMAKE_SOURCE_DIR}/engine/cuda/conv_file.c
                                  ${CMAKE_SOURCE_DIR}/engine/cuda/conv_pool.c)

set(DSE_CUDA_BUILT OFF)
set(_dse_cuda_want "${DSE_CUDA}")
if(DSE_SANITIZE AND _dse_cuda_want STREQUAL "AUTO")
    set(_dse_cuda_want OFF)
    message(STATUS "dse: CUDA backend left out of the sanitizer build")
endif()

if(NOT _dse_cuda_want STREQUAL "OFF")
    set(_dse_cuda_why "")
    if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
        set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
    endif()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
        set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "GPU architectures to compile the kernels for")
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    find_package(CUDAToolkit QUIET)
    list(APPEND CMAKE_MODULE_PATH ${CMAKE_SOURCE_DIR}/cmake)
    find_package(CUDNN QUIET)
    if(NOT CMAKE_CUDA_COMPILER)
        set(_dse_cuda_why "no CUDA compiler (nvcc)")
    elseif(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublas)
        set(_dse_cuda_why "no CUDA toolkit with cuBLAS")
    elseif(NOT CUDNN_FOUND)
        set(_dse_cuda_why "no cuDNN 9 (set CUDNN_ROOT)")
    endif()

    if(_dse_cuda_why STREQUAL "")
        enable_language(CUDA)
        # Executables stay C-linked (CUDA would otherwise propagate as their link language
        # from the static kernels library, and want CUDA_ARCHITECTURES on every target made
        # before this point); the kernels need only cudart and the C++ runtime.
        set(CMAKE_CUDA_LINKER_PREFERENCE_PROPAGATES 0)
        add_library(dse_engine_cudak STATIC ${CMAKE_SOURCE_DIR}/engine/cuda/kernels.cu)
        set_target_properties(dse_engine_cudak PROPERTIES COMPILE_OPTIONS "" CUDA_STANDARD 17
                              CUDA_STANDARD_REQUIRED ON CUDA_SEPARABLE_COMPILATION OFF)
        target_compile_options(dse_engine_cudak PRIVATE
            --fmad=false -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter
            $<$<BOOL:${DSE_WERROR}>:-Werror=all-warnings -Xcompiler=-Werror>)
        # The kernels are part of the engine: they see what it sees (CMakeLists.txt, dse_layer).
        get_target_property(_dse_engine_root dse_engine DSE_INCLUDE_ROOT)
        target_include_directories(dse_engine_cudak PRIVATE ${_dse_engine_root})
        target_link_libraries(dse_engine_cudak PUBLIC CUDA::cudart_static)

        target_sources(dse_engine PRIVATE ${CMAKE_SOURCE_DIR}/engine/cuda/ctx.c
                       ${CMAKE_SOURCE_DIR}/engine/cuda/conv.c ${CMAKE_SOURCE_DIR}/engine/cuda/conv_graph.c
                       ${CMAKE_SOURCE_DIR}/engine/cuda/ops.c ${CMAKE_SOURCE_DIR}/engine/cuda/step.c
                       ${CMAKE_SOURCE_DIR}/engine/cuda/fail.c ${CMAKE_SOURCE_DIR}/engine/cuda/table.c)
        set_source_files_properties(${CMAKE_SOURCE_DIR}/engine/backend.c PROPERTIES COMPILE_DEFINITIONS DSE_CUDA)
        # cuBLAS is loaded with dlopen when a CUDA context is made (engine/cuda/ctx.c): linked,
        # its relocations would cost every dse process about 0.1 s at start-up. Only its
        # headers and the path of the library found here are used at build time.
        get_target_property(_dse_cublas CUDA::cublas IMPORTED_LOCATION)
        get_filename_component(_dse_cublas "${_dse_cublas}" REALPATH)
        set_property(SOURCE ${CMAKE_SOURCE_DIR}/engine/cuda/ctx.c APPEND PROPERTY COMPILE_DEFINITIONS
                     DSE_CUBLAS_LIBRARY="${_dse_cublas}")
        target_link_libraries(dse_engine PUBLIC dse_engine_cudak CUDA::cudart_static CUDNN::cudnn ${CMAKE_DL_LIBS})
        set(DSE_CUDA_BUILT ON)
        message(STATUS "dse: CUDA backend on (CUDA ${CUDAToolkit_VERSION}, cuDNN ${CUDNN_VERSION} at "
                       "${CUDNN_LIBRARY}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
    elseif(_dse_cuda_want STREQUAL "ON")
        message(FATAL_ERROR "dse: DSE_CUDA=ON but ${_dse_cuda_why}")
    else()
        message(STATUS "dse: CUDA backend not built: ${_dse_cuda_why}")
    endif()
endif()
