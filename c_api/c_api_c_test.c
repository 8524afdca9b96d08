/* The C API from C: the header compiles as C99, and a C program loads a
 * net, reads its metadata, runs it and reads an error. Softmax of
 * testdata/softmax.pbtxt against values computed here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "c_api/scopeflow_c_api.h"

static int failures = 0;

#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

static int Ok(sf_status* status) {
  if (status == NULL) return 1;
  fprintf(stderr, "unexpected error: %s\n", sf_status_message(status));
  sf_status_free(status);
  ++failures;
  return 0;
}

int main(void) {
  EXPECT(sf_api_version() >= SF_API_VERSION);
  sf_predictor* predictor = NULL;
  if (!Ok(sf_predictor_load("c_api/testdata/softmax.pbtxt", NULL, NULL,
                            &predictor))) {
    return 1;
  }
  EXPECT(sf_predictor_num_inputs(predictor) == 1);
  const sf_tensor_info* x = sf_predictor_input(predictor, 0);
  EXPECT(strcmp(sf_tensor_info_name(x), "x") == 0);
  EXPECT(sf_tensor_info_dtype(x) == SF_FLOAT32);
  EXPECT(sf_tensor_info_rank(x) == 2);
  EXPECT(sf_tensor_info_dim(x, 0) == -1 && sf_tensor_info_dim(x, 1) == 3);

  float values[6] = {1, 2, 3, -1, 0, 4};
  const int64_t dims[2] = {2, 3};
  sf_tensor* input = NULL;
  Ok(sf_tensor_wrap(values, sizeof values, SF_FLOAT32, dims, 2, &input));
  const char* names[1] = {"x"};
  const sf_tensor* inputs[1] = {input};
  sf_tensor* output = NULL;
  if (Ok(sf_predictor_run(predictor, names, inputs, 1, &output, 1))) {
    const float* y = sf_tensor_const_data(output);
    for (int r = 0; r < 2; ++r) {
      double total = 0;
      for (int c = 0; c < 3; ++c) total += exp(values[r * 3 + c]);
      for (int c = 0; c < 3; ++c) {
        EXPECT(fabs(y[r * 3 + c] - exp(values[r * 3 + c]) / total) < 1e-6);
      }
    }
  }
  sf_tensor_free(output);

  /* An error: the input under another name. */
  names[0] = "y";
  output = NULL;
  sf_status* status = sf_predictor_run(predictor, names, inputs, 1, &output, 1);
  EXPECT(sf_status_code(status) == SF_INVALID_ARGUMENT);
  EXPECT(strcmp(sf_status_message(status),
                "unknown input \"y\" (the model's inputs: x)") == 0);
  EXPECT(output == NULL);
  sf_status_free(status);

  sf_tensor_free(input);
  sf_predictor_free(predictor);
  if (failures == 0) printf("PASS\n");
  return failures == 0 ? 0 : 1;
}
