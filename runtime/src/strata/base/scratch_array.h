// ScratchArray<T, N>: `size` value-initialized Ts for the duration of a
// call, stored in the object itself when size <= N and on the heap only
// beyond. ScratchVector<T, N>: the same for a list that grows by
// push_back. For the per-call arrays of hot paths (a dispatch's bindings, a
// submission's command buffers, a wait's timepoints), which are almost
// always short. Only the elements in use are constructed, so a large N
// costs stack space, not time.
#ifndef STRATA_BASE_SCRATCH_ARRAY_H_
#define STRATA_BASE_SCRATCH_ARRAY_H_

#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <utility>
#include <vector>

namespace strata {

template <typename T, size_t N> class ScratchArray {
public:
  explicit ScratchArray(size_t size) : size_(size) {
    if (size > N) {
      heap_ = std::make_unique<T[]>(size);
      data_ = heap_.get();
      return;
    }
    data_ = reinterpret_cast<T *>(storage_);
    for (size_t i = 0; i < size; ++i)
      new (&data_[i]) T();
  }
  ~ScratchArray() {
    if (!heap_)
      std::destroy_n(data_, size_);
  }
  ScratchArray(const ScratchArray &) = delete;
  ScratchArray &operator=(const ScratchArray &) = delete;

  size_t size() const { return size_; }
  T *data() { return data_; }
  const T *data() const { return data_; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }

private:
  size_t size_;
  T *data_;
  alignas(T) unsigned char storage_[N * sizeof(T)];
  std::unique_ptr<T[]> heap_;
};

template <typename T, size_t N> class ScratchVector {
public:
  ScratchVector() = default;
  ~ScratchVector() {
    if (heap_.empty())
      std::destroy_n(inline_data(), size_);
  }
  ScratchVector(const ScratchVector &) = delete;
  ScratchVector &operator=(const ScratchVector &) = delete;

  void push_back(T value) {
    if (heap_.empty() && size_ < N) {
      new (&inline_data()[size_++]) T(std::move(value));
      return;
    }
    if (heap_.empty()) {
      // Past N: everything moves to the heap, once.
      heap_.reserve(2 * N + 1);
      for (size_t i = 0; i < size_; ++i)
        heap_.push_back(std::move(inline_data()[i]));
      std::destroy_n(inline_data(), size_);
    }
    heap_.push_back(std::move(value));
    ++size_;
  }

  // Destroys every element; the heap part's capacity is kept.
  void clear() {
    if (heap_.empty())
      std::destroy_n(inline_data(), size_);
    else
      heap_.clear();
    size_ = 0;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T *data() { return heap_.empty() ? inline_data() : heap_.data(); }
  const T *data() const { return heap_.empty() ? inline_data() : heap_.data(); }
  T &operator[](size_t i) { return data()[i]; }
  T *begin() { return data(); }
  T *end() { return data() + size_; }
  const T *begin() const { return data(); }
  const T *end() const { return data() + size_; }
  std::span<T> span() { return {data(), size_}; }
  std::span<const T> span() const { return {data(), size_}; }

private:
  T *inline_data() { return reinterpret_cast<T *>(storage_); }
  const T *inline_data() const { return reinterpret_cast<const T *>(storage_); }

  alignas(T) unsigned char storage_[N * sizeof(T)];
  size_t size_ = 0;
  std::vector<T> heap_;
};

} // namespace strata

#endif // STRATA_BASE_SCRATCH_ARRAY_H_
