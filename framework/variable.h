// Variable: a named slot of a Scope holding one object of any type.
#ifndef SCOPEFLOW_FRAMEWORK_VARIABLE_H_
#define SCOPEFLOW_FRAMEWORK_VARIABLE_H_

#include <memory>
#include <string>
#include <typeinfo>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace scopeflow {

// The readable name of a C++ type, e.g. "scopeflow::Tensor".
std::string ReadableTypeName(const std::type_info& type);

// Holds nothing or one object, owned by the variable and destroyed with it.
// Its type is fixed at the first GetMutable<T>: asking for another type is
// an error, never a silent replacement (Clear first to change it).
//
// Thread safety: a Variable is not synchronised. Any number of threads may
// call the const methods at once; GetMutable and Clear need exclusive
// access (the executor gives each variable one writer at a time).
class Variable {
 public:
  Variable() = default;
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

  // The held T, default-constructed on first use. FailedPrecondition if the
  // variable holds another type.
  template <typename T>
  absl::StatusOr<T*> GetMutable() {
    if (holder_ == nullptr) holder_ = std::make_unique<HolderOf<T>>();
    if (!IsType<T>()) return WrongType(typeid(T));
    return static_cast<T*>(holder_->object());
  }

  // The held T. FailedPrecondition if the variable is empty or holds
  // another type.
  template <typename T>
  absl::StatusOr<const T*> Get() const {
    if (!IsType<T>()) return WrongType(typeid(T));
    return static_cast<const T*>(holder_->object());
  }

  template <typename T>
  bool IsType() const {
    return holder_ != nullptr && holder_->type() == typeid(T);
  }

  bool IsInitialized() const { return holder_ != nullptr; }

  // Destroys the held object; the variable is empty again.
  void Clear() { holder_.reset(); }

  // The held type's readable name, or "nothing".
  std::string TypeName() const;

 private:
  class Holder {
   public:
    virtual ~Holder() = default;
    virtual const std::type_info& type() const = 0;
    virtual void* object() = 0;
  };

  template <typename T>
  class HolderOf final : public Holder {
   public:
    const std::type_info& type() const override { return typeid(T); }
    void* object() override { return &object_; }

   private:
    T object_;
  };

  absl::Status WrongType(const std::type_info& asked) const;

  std::unique_ptr<Holder> holder_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_VARIABLE_H_
