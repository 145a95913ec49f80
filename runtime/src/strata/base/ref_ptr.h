// Intrusive reference counting for every runtime object that crosses the VM
// boundary (byte buffers, lists, HAL objects). Objects start with one
// reference owned by their creator; RefPtr<T> retains/releases.
#ifndef STRATA_BASE_REF_PTR_H_
#define STRATA_BASE_REF_PTR_H_

#include <atomic>
#include <cstdint>
#include <utility>

namespace strata {

// Identifies the dynamic type of a RefObject. One static instance per type;
// types compare by address. `name` is what the VM and tools print
// ("hal.buffer", "vm.list", ...).
struct RefTypeDescriptor {
  const char *name;
};

class RefObject {
public:
  RefObject(const RefObject &) = delete;
  RefObject &operator=(const RefObject &) = delete;

  void Retain() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void Release() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      OnLastReference();
  }
  int32_t ref_count() const {
    return ref_count_.load(std::memory_order_acquire);
  }

  const RefTypeDescriptor *ref_type() const { return type_; }

protected:
  explicit RefObject(const RefTypeDescriptor *type) : type_(type) {}
  virtual ~RefObject() = default;

  // Runs when the last reference goes: deletes the object. Types kept in
  // an ObjectPool (base/object_pool.h) park it there for reuse instead.
  virtual void OnLastReference() const { delete this; }
  // For a pool handing out a parked object: one reference again, the
  // taker's.
  void ReviveFromPool() const {
    ref_count_.store(1, std::memory_order_relaxed);
  }

private:
  const RefTypeDescriptor *type_;
  mutable std::atomic<int32_t> ref_count_{1};
};

// Owning pointer to a RefObject (or subclass).
template <typename T> class RefPtr {
public:
  RefPtr() = default;
  RefPtr(std::nullptr_t) {}
  RefPtr(const RefPtr &other) : ptr_(other.ptr_) {
    if (ptr_)
      ptr_->Retain();
  }
  RefPtr(RefPtr &&other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U> RefPtr(const RefPtr<U> &other) : ptr_(other.get()) {
    if (ptr_)
      ptr_->Retain();
  }
  template <typename U>
  RefPtr(RefPtr<U> &&other) noexcept : ptr_(other.Detach()) {}
  ~RefPtr() { reset(); }

  RefPtr &operator=(RefPtr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  // Takes ownership of the reference the caller holds (no retain).
  static RefPtr Adopt(T *ptr) {
    RefPtr result;
    result.ptr_ = ptr;
    return result;
  }
  // Adds a reference of our own.
  static RefPtr Retain(T *ptr) {
    if (ptr)
      ptr->Retain();
    return Adopt(ptr);
  }

  // Gives up ownership without releasing; the caller now owns the reference.
  T *Detach() { return std::exchange(ptr_, nullptr); }

  void reset() {
    if (T *ptr = std::exchange(ptr_, nullptr))
      ptr->Release();
  }

  T *get() const { return ptr_; }
  T *operator->() const { return ptr_; }
  T &operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }

  // Identity comparisons (C++20 derives != and the reversed forms).
  friend bool operator==(const RefPtr &ref, std::nullptr_t) {
    return ref.ptr_ == nullptr;
  }
  template <typename U> bool operator==(const RefPtr<U> &other) const {
    return ptr_ == other.get();
  }

private:
  T *ptr_ = nullptr;
};

template <typename T, typename... Args> RefPtr<T> MakeRef(Args &&...args) {
  return RefPtr<T>::Adopt(new T(std::forward<Args>(args)...));
}

// Checked downcast: returns null when `object` is not of type T.
// T must declare `static const RefTypeDescriptor kRefType;`.
template <typename T> T *RefCast(RefObject *object) {
  if (!object || object->ref_type() != &T::kRefType)
    return nullptr;
  return static_cast<T *>(object);
}

} // namespace strata

#endif // STRATA_BASE_REF_PTR_H_
