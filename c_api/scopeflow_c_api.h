/* The C API of scopeflow: load a model once, run it from many threads.
 *
 * Plain C (C99), so that any language with a C foreign-function interface
 * can embed scopeflow, and a stable ABI, so that a program built against
 * one version of this header runs against any newer libscopeflow.so:
 * - every object is an opaque handle, made and freed by the library, and
 *   read through functions, never through a struct layout;
 * - functions and enum values are only ever added, never changed or
 *   renumbered; SF_API_VERSION counts the additions, and sf_api_version()
 *   says which the library has (a program may check that it is at least
 *   the SF_API_VERSION it was built with);
 * - the exported symbols carry the version node SCOPEFLOW_1.
 *
 * Errors: every function that can fail returns an sf_status*, NULL on
 * success; otherwise the caller owns the status (sf_status_free) and reads
 * its code and message. Nothing the library does throws or aborts across
 * this boundary: out of memory and internal errors come back as statuses.
 * A failed call leaves its out-parameters untouched.
 *
 * Thread safety: one sf_predictor may run on any number of threads at once
 * (its parameters are shared, not copied). An sf_tensor and an sf_options
 * are not synchronised: a thread that changes one (writes its elements,
 * sets an option) must not race with another using it; many runs may read
 * one input tensor at once.
 */
#ifndef SCOPEFLOW_C_API_H_
#define SCOPEFLOW_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's API; see sf_api_version(). 2 added the
 * dtypes SF_INT16 to SF_FLOAT8E5M2FNUZ. */
#define SF_API_VERSION 2

/* Status codes: those of absl::Status (and gRPC), by number. */
typedef enum sf_code {
  SF_OK = 0,
  SF_CANCELLED = 1,
  SF_UNKNOWN = 2,
  SF_INVALID_ARGUMENT = 3,
  SF_DEADLINE_EXCEEDED = 4,
  SF_NOT_FOUND = 5,
  SF_ALREADY_EXISTS = 6,
  SF_PERMISSION_DENIED = 7,
  SF_RESOURCE_EXHAUSTED = 8,
  SF_FAILED_PRECONDITION = 9,
  SF_ABORTED = 10,
  SF_OUT_OF_RANGE = 11,
  SF_UNIMPLEMENTED = 12,
  SF_INTERNAL = 13,
  SF_UNAVAILABLE = 14,
  SF_DATA_LOSS = 15,
  SF_UNAUTHENTICATED = 16
} sf_code;

/* Element types, numbered as proto/framework.proto's DataType. */
typedef enum sf_dtype {
  SF_DTYPE_UNSPECIFIED = 0,
  SF_FLOAT32 = 1,
  SF_FLOAT64 = 2,
  SF_FLOAT16 = 3,
  SF_INT32 = 4,
  SF_INT64 = 5,
  SF_UINT8 = 6,
  SF_BOOL = 7,
  SF_INT8 = 8,
  SF_INT16 = 9,
  SF_UINT16 = 10,
  SF_UINT32 = 11,
  SF_UINT64 = 12,
  SF_BFLOAT16 = 13,
  SF_FLOAT8E4M3FN = 14,
  SF_FLOAT8E4M3FNUZ = 15,
  SF_FLOAT8E5M2 = 16,
  SF_FLOAT8E5M2FNUZ = 17
} sf_dtype;

typedef struct sf_status sf_status;
typedef struct sf_options sf_options;
typedef struct sf_predictor sf_predictor;
typedef struct sf_tensor sf_tensor;
typedef struct sf_tensor_info sf_tensor_info;

/* ---- Versions ---------------------------------------------------------- */

/* The SF_API_VERSION the library was built with: at least that of every
 * header it serves. */
int sf_api_version(void);

/* The library's release, e.g. "0.1.0". Static storage. */
const char* sf_version_string(void);

/* Which engine runs the models. libscopeflow.so is a small loader: on its
 * first call it loads an engine from its directory's scopeflow/ folder:
 * "cuda" (libscopeflow_cuda.so: CUDA kernels, and the CPU's) when the
 * NVIDIA driver sees a device and that engine and its CUDA libraries load,
 * else "cpu" (libscopeflow_cpu.so, which needs no CUDA library). The
 * environment variable SCOPEFLOW_ENGINE, a list of engine files separated
 * by ':', replaces that choice. "none" when no engine could be loaded:
 * every call that can fail then returns a status saying why. */
const char* sf_engine_name(void);

/* ---- Process-wide settings --------------------------------------------- */

/* Asks glibc's malloc to keep the memory a run frees for the next run
 * instead of returning it to the system, which on a large net makes runs
 * several times faster (fewer page faults). Process-wide, so left to the
 * program to call, once, before loading. Returns 1 if glibc took the
 * settings, 0 if it refused one. */
int sf_keep_freed_host_memory_for_reuse(void);

/* ---- Status ------------------------------------------------------------ */

/* SF_OK for NULL (success). */
sf_code sf_status_code(const sf_status* status);
/* The message, "" for NULL; valid until the status is freed. Messages name
 * what was wrong: the input, the expected and the given dtype or shape,
 * the file. */
const char* sf_status_message(const sf_status* status);
/* Frees a status; NULL is ignored. */
void sf_status_free(sf_status* status);

/* "float32", "int64", ...; "unspecified" for other values. Static. */
const char* sf_dtype_name(sf_dtype dtype);
/* Bytes per element: 4 for SF_FLOAT32; 0 for SF_DTYPE_UNSPECIFIED and
 * values that are no dtype. */
size_t sf_dtype_size(sf_dtype dtype);

/* ---- Options of a predictor ------------------------------------------- */

sf_status* sf_options_create(sf_options** out);
void sf_options_free(sf_options* options);
/* "cpu" (the default), "cuda" or "cuda:N". A library without CUDA support
 * refuses "cuda" when the predictor is loaded. */
sf_status* sf_options_set_place(sf_options* options, const char* place);
/* Appends a variable to the outputs a run returns. Without any: the model's
 * outputs (an ONNX model's graph outputs; for a net, the variables some op
 * writes and no op reads), in order. */
sf_status* sf_options_add_output(sf_options* options, const char* name);

/* ---- Predictor --------------------------------------------------------- */

/* Loads a model: a scopeflow net (".pbtxt" or ".txt": protobuf text,
 * anything else but ".onnx": binary) with its parameter file as written by
 * `scopeflow run --save_params` or `scopeflow import-onnx --params`, or an
 * ONNX model (".onnx", parameters from its initializers; a parameter file,
 * if given, replaces those it names). `params_path` and `options` may be
 * NULL. */
sf_status* sf_predictor_load(const char* model_path, const char* params_path,
                             const sf_options* options, sf_predictor** out);

/* Another predictor over the same loaded model, sharing its parameters,
 * with its own pool of run scopes (threads holding one each share no
 * lock). It may outlive the original. */
sf_status* sf_predictor_clone(const sf_predictor* predictor,
                              sf_predictor** out);

/* Frees a predictor; NULL is ignored. No run may be in progress on it. */
void sf_predictor_free(sf_predictor* predictor);

/* The net's name (static while the predictor lives). */
const char* sf_predictor_name(const sf_predictor* predictor);

/* The inputs every run must give, and the outputs it returns, in order. */
size_t sf_predictor_num_inputs(const sf_predictor* predictor);
size_t sf_predictor_num_outputs(const sf_predictor* predictor);
/* Input or output `index`, NULL when out of range; valid while the
 * predictor lives. */
const sf_tensor_info* sf_predictor_input(const sf_predictor* predictor,
                                         size_t index);
const sf_tensor_info* sf_predictor_output(const sf_predictor* predictor,
                                          size_t index);

/* What an input or output is. */
const char* sf_tensor_info_name(const sf_tensor_info* info);
sf_dtype sf_tensor_info_dtype(const sf_tensor_info* info);
/* The rank, -1 when not even that is known. */
int sf_tensor_info_rank(const sf_tensor_info* info);
/* The size of dimension `axis`: -1 for one known only at run time (the
 * batch, usually) and for an axis out of range. */
int64_t sf_tensor_info_dim(const sf_tensor_info* info, int axis);
/* The name of dimension `axis` ("batch"), "" for one without. Inputs that
 * name a dimension alike must give it one size in a run. */
const char* sf_tensor_info_dim_name(const sf_tensor_info* info, int axis);

/* Runs the model. `input_names[i]` names the input `inputs[i]` (every input
 * of the model once, in any order); the inputs are read where they lie,
 * without a copy, and only during the call.
 *
 * sf_predictor_run returns the outputs as new tensors the caller owns:
 * `outputs` has room for `num_outputs` == sf_predictor_num_outputs
 * handles.
 *
 * sf_predictor_run_into writes them into the caller's tensors instead
 * (for instance sf_tensor_wrap over the caller's buffers), each of the
 * dtype and shape the run computes for that output.
 *
 * Errors (SF_INVALID_ARGUMENT) name the input or output: unknown, given
 * twice or missing, another dtype or shape than the model declares, an
 * output tensor that does not fit; errors of the model's ops name the op. */
sf_status* sf_predictor_run(const sf_predictor* predictor,
                            const char* const* input_names,
                            const sf_tensor* const* inputs, size_t num_inputs,
                            sf_tensor** outputs, size_t num_outputs);
sf_status* sf_predictor_run_into(const sf_predictor* predictor,
                                 const char* const* input_names,
                                 const sf_tensor* const* inputs,
                                 size_t num_inputs, sf_tensor* const* outputs,
                                 size_t num_outputs);

/* ---- Tensors ----------------------------------------------------------- */

/* A tensor in memory the library owns (64-byte aligned, zeroed). `dims`
 * may be NULL when `rank` is 0 (a scalar). */
sf_status* sf_tensor_create(sf_dtype dtype, const int64_t* dims, size_t rank,
                            sf_tensor** out);

/* A tensor over `data`, which the caller owns and keeps valid (and does
 * not free) until sf_tensor_free of this tensor: `byte_size` must be the
 * size of `rank` dims of `dtype`, row-major. The library copies nothing
 * and never keeps a view of `data` past a call: outputs never share it. */
sf_status* sf_tensor_wrap(void* data, size_t byte_size, sf_dtype dtype,
                          const int64_t* dims, size_t rank, sf_tensor** out);

/* Frees a tensor (not the caller's memory of sf_tensor_wrap); NULL is
 * ignored. */
void sf_tensor_free(sf_tensor* tensor);

sf_dtype sf_tensor_dtype(const sf_tensor* tensor);
int sf_tensor_rank(const sf_tensor* tensor);
/* The size of dimension `axis`; -1 for an axis out of range. */
int64_t sf_tensor_dim(const sf_tensor* tensor, int axis);
int64_t sf_tensor_num_elements(const sf_tensor* tensor);
size_t sf_tensor_byte_size(const sf_tensor* tensor);
/* The elements, row-major, in host memory; NULL for an empty tensor. The
 * caller may write them between runs. */
void* sf_tensor_data(sf_tensor* tensor);
const void* sf_tensor_const_data(const sf_tensor* tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCOPEFLOW_C_API_H_ */
