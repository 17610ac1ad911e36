# Which libtorch kvbench builds against, and whether its CUDA path is compiled in.
#   default                         Debian's libtorch 1.13 (CPU only), found in the system prefix.
#   -DKVBENCH_TORCH_PREFIX=DIR      a PyTorch 2.x install: the `torch` package folder, as
#                                   `python -c "import torch, os; print(os.path.dirname(torch.__file__))"`
#                                   prints (scripts/setup.sh makes one in .venv; build-torch2/ uses it).
# A PyTorch built with CUDA (PyPI's wheels are) needs nvcc for its CMake config, which otherwise stops with
# an error. Without nvcc (or with -DKVBENCH_WITH_CUDA=OFF), kvbench links that PyTorch's CPU libraries alone
# and says so: the build runs on the CPU, and `--device cuda` is refused with the reason.
# Sets TORCH_LIBRARIES, TORCH_CXX_FLAGS and KVBENCH_CUDA (ON when the CUDA path is compiled in).
set(KVBENCH_TORCH_PREFIX "" CACHE PATH "A PyTorch 2.x install (its torch package folder); empty: Debian's libtorch")
option(KVBENCH_WITH_CUDA "Compile the CUDA path when the libtorch has one and nvcc is found" ON)
set(KVBENCH_CUDA OFF)

if(NOT KVBENCH_TORCH_PREFIX)
  find_package(Torch REQUIRED)
  return()
endif()

if(NOT EXISTS "${KVBENCH_TORCH_PREFIX}/share/cmake/Torch/TorchConfig.cmake")
  message(FATAL_ERROR "KVBENCH_TORCH_PREFIX=${KVBENCH_TORCH_PREFIX} holds no share/cmake/Torch/TorchConfig.cmake: "
                      "point it at the torch package folder of a PyTorch install")
endif()
list(PREPEND CMAKE_PREFIX_PATH "${KVBENCH_TORCH_PREFIX}/share/cmake")
# PyPI's libtorch exports its own copies of std::filesystem (libtorch.so, libtorch_cpu.so); found before
# the C++ runtime's, they crashed kvbench's first remove_all. Naming libstdc++ ahead of torch puts the
# runtime first in the symbol lookup order (it loads first), for kvbench and torch alike.
set(kvbench_runtime_first stdc++)
# PyTorch's include folder carries its own fmt (12.x), which would shadow the system's that spdlog and
# kvbench are built with (-isystem folders come before /usr/include). The system's fmt is put first.
get_target_property(fmt_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
if(EXISTS "${KVBENCH_TORCH_PREFIX}/include/fmt" AND fmt_include)
  file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/system-fmt")
  file(CREATE_LINK "${fmt_include}/fmt" "${CMAKE_BINARY_DIR}/system-fmt/fmt" SYMBOLIC)
  include_directories(BEFORE "${CMAKE_BINARY_DIR}/system-fmt")
endif()
set(torch_lib "${KVBENCH_TORCH_PREFIX}/lib")

if(NOT EXISTS "${torch_lib}/libtorch_cuda.so")
  find_package(Torch REQUIRED)  # a CPU-only PyTorch
  list(PREPEND TORCH_LIBRARIES ${kvbench_runtime_first})
  return()
endif()

find_program(KVBENCH_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATHS /usr/local/cuda PATH_SUFFIXES bin)
if(KVBENCH_WITH_CUDA AND KVBENCH_NVCC)
  # No kernels of kvbench's own are compiled for a GPU: the CUDA path is ATen's (libtorch_cuda), linked in
  # whole so that its ops register. PyTorch's config still wants architectures; the GPUs papers use.
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "8.0;8.9;9.0")
  endif()
  find_package(Torch REQUIRED)
  list(PREPEND TORCH_LIBRARIES ${kvbench_runtime_first})
  set(KVBENCH_CUDA ON)
  message(STATUS "kvbench: PyTorch ${Torch_VERSION} with CUDA (nvcc: ${KVBENCH_NVCC})")
  return()
endif()

if(NOT KVBENCH_NVCC)
  message(WARNING "kvbench: ${KVBENCH_TORCH_PREFIX} is a CUDA build of PyTorch, but nvcc was not found (looked in "
                  "CUDA_HOME, CUDA_PATH, /usr/local/cuda and PATH). Building for the CPU only, with its CPU "
                  "libraries; install the CUDA toolkit, or set CUDA_HOME, for the CUDA path.")
else()
  message(STATUS "kvbench: KVBENCH_WITH_CUDA=OFF: building for the CPU only with ${KVBENCH_TORCH_PREFIX}")
endif()
add_library(kvbench_torch_cpu INTERFACE)
target_include_directories(kvbench_torch_cpu SYSTEM INTERFACE "${KVBENCH_TORCH_PREFIX}/include"
                           "${KVBENCH_TORCH_PREFIX}/include/torch/csrc/api/include")
target_link_libraries(kvbench_torch_cpu INTERFACE "${torch_lib}/libtorch_cpu.so" "${torch_lib}/libc10.so")
set(TORCH_LIBRARIES ${kvbench_runtime_first} kvbench_torch_cpu)
set(TORCH_CXX_FLAGS "")
