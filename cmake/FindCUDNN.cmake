# FindCUDNN.cmake: cuDNN 9 (headers and the cudnn library) for cmake/cuda.cmake.
# Looks, in order, in CUDNN_ROOT (cache variable or environment), the folder of
# Python's nvidia.cudnn package (PyTorch's pip wheels install cuDNN, headers included, at
# site-packages/nvidia/cudnn/{include,lib}; its library is libcudnn.so.9, with no
# unversioned link), the CUDA toolkit, then the system. Sets CUDNN_FOUND,
# CUDNN_INCLUDE_DIR, CUDNN_LIBRARY, CUDNN_VERSION and the imported target CUDNN::cudnn.
# cuDNN before 9 is not accepted: the backend uses cuDNN 9's header split and
# cudnnGetLastErrorString.

set(_dse_cudnn_hints "")
if(CUDNN_ROOT)
    list(APPEND _dse_cudnn_hints "${CUDNN_ROOT}")
endif()
if(DEFINED ENV{CUDNN_ROOT})
    list(APPEND _dse_cudnn_hints "$ENV{CUDNN_ROOT}")
endif()

# PyTorch's cuDNN: nvidia.cudnn is a namespace package (no __file__), so ask its __path__.
find_program(DSE_PYTHON3 NAMES python3 python)
mark_as_advanced(DSE_PYTHON3)
if(DSE_PYTHON3)
    execute_process(
        COMMAND "${DSE_PYTHON3}" -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
        OUTPUT_VARIABLE _dse_cudnn_pip OUTPUT_STRIP_TRAILING_WHITESPACE
        ERROR_QUIET RESULT_VARIABLE _dse_cudnn_pip_rc)
    if(_dse_cudnn_pip_rc EQUAL 0 AND IS_DIRECTORY "${_dse_cudnn_pip}")
        list(APPEND _dse_cudnn_hints "${_dse_cudnn_pip}")
    endif()
endif()
if(CUDAToolkit_LIBRARY_ROOT)
    list(APPEND _dse_cudnn_hints "${CUDAToolkit_LIBRARY_ROOT}")
endif()
if(CUDAToolkit_INCLUDE_DIRS)
    list(APPEND _dse_cudnn_hints ${CUDAToolkit_INCLUDE_DIRS})
endif()
if(CUDAToolkit_LIBRARY_DIR)
    list(APPEND _dse_cudnn_hints "${CUDAToolkit_LIBRARY_DIR}")
endif()

find_path(CUDNN_INCLUDE_DIR NAMES cudnn_version.h
          HINTS ${_dse_cudnn_hints}
          PATH_SUFFIXES include include/x86_64-linux-gnu)
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
             HINTS ${_dse_cudnn_hints}
             PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)

set(CUDNN_VERSION "")
if(CUDNN_INCLUDE_DIR AND EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
    file(STRINGS "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _dse_cudnn_v REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
    string(REGEX REPLACE ".*CUDNN_MAJOR ([0-9]+).*" "\\1" _dse_major "${_dse_cudnn_v}")
    string(REGEX REPLACE ".*CUDNN_MINOR ([0-9]+).*" "\\1" _dse_minor "${_dse_cudnn_v}")
    string(REGEX REPLACE ".*CUDNN_PATCHLEVEL ([0-9]+).*" "\\1" _dse_patch "${_dse_cudnn_v}")
    set(CUDNN_VERSION "${_dse_major}.${_dse_minor}.${_dse_patch}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN
    REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
    VERSION_VAR CUDNN_VERSION)
if(CUDNN_FOUND AND CUDNN_VERSION VERSION_LESS 9)
    message(STATUS "cuDNN ${CUDNN_VERSION} at ${CUDNN_INCLUDE_DIR} is older than 9; not used")
    set(CUDNN_FOUND FALSE)
endif()

if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
    add_library(CUDNN::cudnn UNKNOWN IMPORTED)
    set_target_properties(CUDNN::cudnn PROPERTIES
        IMPORTED_LOCATION "${CUDNN_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
