/* Runs the MLP of examples/mlp through the C API of an installed
 * libscopeflow: loads the net and its parameters, lists its inputs and
 * outputs, runs it on an image batch read from a .npy file, and prints the
 * probabilities, one row per line.
 *
 *   cc main.c $(pkg-config --cflags --libs scopeflow) -o mlp_c
 *   ./mlp_c examples/mlp/main.pbtxt mlp.params examples/mlp/digit.npy
 *
 * (mlp.params as `scopeflow run examples/mlp/main.pbtxt
 * --startup=examples/mlp/startup.pbtxt --save_params=mlp.params` writes
 * it; a prefix outside the loader's path needs LD_LIBRARY_PATH or
 * -Wl,-rpath,$(pkg-config --variable=libdir scopeflow).)
 */
#include <scopeflow_c_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the status's message and frees it; returns whether it failed. */
static int Failed(sf_status* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "mlp_c: %s: %s\n", what, sf_status_message(status));
  sf_status_free(status);
  return 1;
}

/* Reads a 2-D little-endian float32 .npy file (version 1, C order) into a
 * new buffer; returns NULL on any other file. */
static float* ReadNpy(const char* path, int64_t dims[2]) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return NULL;
  unsigned char preamble[10];
  char header[4096];
  float* data = NULL;
  if (fread(preamble, 1, 10, file) != 10 ||
      memcmp(preamble, "\x93NUMPY\x01", 7) != 0) {
    goto done;
  }
  size_t header_size = preamble[8] | (size_t)preamble[9] << 8;
  if (header_size >= sizeof header ||
      fread(header, 1, header_size, file) != header_size) {
    goto done;
  }
  header[header_size] = '\0';
  const char* shape = strstr(header, "'shape': (");
  long long rows = 0, cols = 0;
  if (strstr(header, "'descr': '<f4'") == NULL ||
      strstr(header, "'fortran_order': False") == NULL || shape == NULL ||
      sscanf(shape, "'shape': (%lld, %lld)", &rows, &cols) != 2 || rows < 0 ||
      cols < 0) {
    goto done;
  }
  size_t count = (size_t)rows * (size_t)cols;
  data = malloc(count * sizeof(float) + 1);
  if (data != NULL && fread(data, sizeof(float), count, file) != count) {
    free(data);
    data = NULL;
  }
  dims[0] = rows;
  dims[1] = cols;
done:
  fclose(file);
  return data;
}

static void PrintInfo(const char* kind, const sf_tensor_info* info) {
  printf("%s %s: %s [", kind, sf_tensor_info_name(info),
         sf_dtype_name(sf_tensor_info_dtype(info)));
  for (int axis = 0; axis < sf_tensor_info_rank(info); ++axis) {
    printf(axis == 0 ? "%lld" : ", %lld",
           (long long)sf_tensor_info_dim(info, axis));
  }
  printf("]\n");
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s NET PARAMS INPUT.npy\n", argv[0]);
    return 2;
  }
  if (sf_api_version() < SF_API_VERSION) {
    fprintf(stderr, "mlp_c: libscopeflow is older than its header\n");
    return 1;
  }
  int64_t dims[2];
  float* image = ReadNpy(argv[3], dims);
  if (image == NULL) {
    fprintf(stderr, "mlp_c: %s: not a 2-D float32 .npy file\n", argv[3]);
    return 1;
  }

  sf_predictor* predictor = NULL;
  sf_tensor* input = NULL;
  sf_tensor* output = NULL;
  int failed = Failed(sf_predictor_load(argv[1], argv[2], NULL, &predictor),
                      "loading the model");
  if (!failed) {
    printf("engine %s\n", sf_engine_name());
    PrintInfo("input", sf_predictor_input(predictor, 0));
    PrintInfo("output", sf_predictor_output(predictor, 0));
    /* The predictor reads the image where it lies, without a copy. */
    failed = Failed(
        sf_tensor_wrap(image, (size_t)(dims[0] * dims[1]) * sizeof(float),
                       SF_FLOAT32, dims, 2, &input),
        "wrapping the image");
  }
  if (!failed) {
    const char* names[] = {
        sf_tensor_info_name(sf_predictor_input(predictor, 0))};
    const sf_tensor* inputs[] = {input};
    failed = Failed(sf_predictor_run(predictor, names, inputs, 1, &output, 1),
                    "running the model");
  }
  if (!failed) {
    const float* probabilities = sf_tensor_const_data(output);
    const int64_t rows = sf_tensor_dim(output, 0);
    const int64_t classes = sf_tensor_dim(output, 1);
    for (int64_t r = 0; r < rows; ++r) {
      printf("probabilities[%lld]:", (long long)r);
      for (int64_t c = 0; c < classes; ++c) {
        printf(" %.9g", probabilities[r * classes + c]);
      }
      printf("\n");
    }
  }
  sf_tensor_free(output);
  sf_tensor_free(input);
  sf_predictor_free(predictor);
  free(image);
  return failed;
}
