/* A stand-in for the NVIDIA driver, libcuda.so.1, where no GPU is visible
 * (removed, or hidden from a container): the library loads, and cuInit
 * fails with CUDA_ERROR_NO_DEVICE (100), as the real driver's does. It says
 * on stderr that it was asked, so that a test knows the loader asked it. */
#include <stdio.h>

int cuInit(unsigned int flags) {
  (void)flags;
  fputs("no_device_driver: cuInit: no device\n", stderr);
  return 100;
}

int cuDeviceGetCount(int* count) {
  *count = 0;
  return 100;
}
