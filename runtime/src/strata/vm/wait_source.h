// WaitSource: something an invocation can wait for without blocking its
// thread. Native modules provide them (the `hal` module wraps fences); the
// VM only queries them, waits on them and subscribes loops to their changes.
#ifndef STRATA_VM_WAIT_SOURCE_H_
#define STRATA_VM_WAIT_SOURCE_H_

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/base/wait.h"

namespace strata::vm {

class WaitSource : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "vm.wait_source"

  // OK once reached, DEFERRED while pending, otherwise the failure.
  virtual Status Query() = 0;
  // Blocks until reached (OK), failed (the failure) or `deadline` passes
  // (DEADLINE_EXCEEDED).
  virtual Status Wait(Deadline deadline) = 0;
  // Until Unsubscribe, `notifier->Notify()` runs (on any thread) whenever
  // the source may have changed. The notifier must outlive the subscription.
  virtual void Subscribe(WaitNotifier *notifier) = 0;
  virtual void Unsubscribe(WaitNotifier *notifier) = 0;

protected:
  WaitSource() : RefObject(&kRefType) {}
};

// What a suspended invocation waits for: `source`, until `deadline` (after
// which the retried call sees DEADLINE_EXCEEDED).
struct WaitRequest {
  RefPtr<WaitSource> source;
  Deadline deadline = Deadline::Infinite();
};

} // namespace strata::vm

#endif // STRATA_VM_WAIT_SOURCE_H_
