# Decides whether the CUDA backend module is built (ISTHMUS_CUDA = AUTO|ON|OFF).
set(ISTHMUS_HAVE_CUDA OFF)
if(NOT ISTHMUS_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(_isthmus_nvcc nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
    if(_isthmus_nvcc)
      set(CMAKE_CUDA_COMPILER ${_isthmus_nvcc})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(ISTHMUS_HAVE_CUDA ON)
  elseif(ISTHMUS_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ISTHMUS_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
if(ISTHMUS_HAVE_CUDA)
  # Note [cuda architectures]
  # ~~~~~~~~~~~~~~~~~~~~~~~~~
  # where a GPU is present (nvidia-smi lists one), SASS for the H100/H200 (sm_90) plus compute_90
  # PTX, which the driver compiles for newer GPUs. On a machine without a GPU (the development and
  # CI machines) PTX only: the device code is still compiled and checked by nvcc's front end and
  # NVVM, and skipping ptxas saves about 40% of every .cu file (a third of the CI's build time went
  # to CUDA); nothing here could run the SASS, and a GPU that loads the PTX compiles it once (the
  # driver caches it). Builds meant for other machines (packages) name their architectures:
  # -DCMAKE_CUDA_ARCHITECTURES=...
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(_isthmus_gpu_here FALSE)
    find_program(_isthmus_nvidia_smi nvidia-smi)
    if(_isthmus_nvidia_smi)
      execute_process(COMMAND "${_isthmus_nvidia_smi}" -L OUTPUT_VARIABLE _isthmus_gpus
        RESULT_VARIABLE _isthmus_smi_rc ERROR_QUIET TIMEOUT 20)
      if(_isthmus_smi_rc EQUAL 0 AND _isthmus_gpus MATCHES "GPU [0-9]")
        set(_isthmus_gpu_here TRUE)
      endif()
    endif()
    if(_isthmus_gpu_here)
      set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
    else()
      set(CMAKE_CUDA_ARCHITECTURES "90-virtual")
      message(STATUS "isthmus: no GPU here; CUDA code compiles to compute_90 PTX only "
        "(Note [cuda architectures]; -DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual for SASS)")
    endif()
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # cuBLAS for matmul: the toolkit's, else the one pip's nvidia-cublas wheel installs; without
  # it the module uses its own tiled kernel (docs/cuda.md).
  set(ISTHMUS_CUBLAS_TARGET "")
  if(TARGET CUDA::cublas)
    set(ISTHMUS_CUBLAS_TARGET CUDA::cublas)
  else()
    find_package(Python 3 COMPONENTS Interpreter QUIET)
    if(Python_EXECUTABLE)
      execute_process(COMMAND "${Python_EXECUTABLE}" -c
        "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        OUTPUT_VARIABLE _isthmus_purelib OUTPUT_STRIP_TRAILING_WHITESPACE)
    endif()
    find_path(ISTHMUS_CUBLAS_INCLUDE_DIR cublas_v2.h
      HINTS "${_isthmus_purelib}/nvidia/cu13/include" "${_isthmus_purelib}/nvidia/cublas/include")
    find_library(ISTHMUS_CUBLAS_LIBRARY NAMES cublas libcublas.so.13 libcublas.so.12
      HINTS "${_isthmus_purelib}/nvidia/cu13/lib" "${_isthmus_purelib}/nvidia/cublas/lib")
    if(ISTHMUS_CUBLAS_INCLUDE_DIR AND ISTHMUS_CUBLAS_LIBRARY)
      add_library(isthmus_cublas INTERFACE)
      target_include_directories(isthmus_cublas INTERFACE "${ISTHMUS_CUBLAS_INCLUDE_DIR}")
      target_link_libraries(isthmus_cublas INTERFACE "${ISTHMUS_CUBLAS_LIBRARY}")
      set(ISTHMUS_CUBLAS_TARGET isthmus_cublas)
    endif()
  endif()
  if(ISTHMUS_CUBLAS_TARGET)
    message(STATUS "isthmus: cuBLAS found (${ISTHMUS_CUBLAS_TARGET} ${ISTHMUS_CUBLAS_LIBRARY})")
  else()
    message(STATUS "isthmus: no cuBLAS; GPU matmul uses the module's own kernel")
  endif()
endif()
message(STATUS "isthmus: CUDA backend ${ISTHMUS_HAVE_CUDA}")
