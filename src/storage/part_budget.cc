#include "storage/part_budget.h"

#include <algorithm>

namespace cedana::storage {

std::shared_ptr<PartBudget> PartBudget::Create(uint64_t limit_bytes, uint64_t part_bytes) {
  part_bytes = std::max<uint64_t>(part_bytes, 1);
  uint64_t parts = std::max<uint64_t>(limit_bytes / part_bytes, 1);
  return std::shared_ptr<PartBudget>(new PartBudget(parts, part_bytes));
}

PartBudget::Lease& PartBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::move(other.budget_);
  }
  return *this;
}

void PartBudget::Lease::Release() {
  if (budget_) budget_->Give();
  budget_.reset();
}

PartBudget::Lease PartBudget::TakeFirst() {
  std::unique_lock lock(mu_);
  ++waiting_;
  freed_.wait(lock, [this] { return leased_ < parts_; });
  --waiting_;
  peak_ = std::max(peak_, ++leased_);
  return Lease(shared_from_this());
}

PartBudget::Lease PartBudget::TrySecond() {
  std::lock_guard lock(mu_);
  if (leased_ >= parts_ || waiting_ > 0) return Lease();
  peak_ = std::max(peak_, ++leased_);
  return Lease(shared_from_this());
}

uint64_t PartBudget::peak_bytes() const {
  std::lock_guard lock(mu_);
  return peak_ * part_bytes_;
}

void PartBudget::Give() {
  {
    std::lock_guard lock(mu_);
    --leased_;
  }
  freed_.notify_one();
}

}  // namespace cedana::storage
