// MemoryBudget: charges up to the limit and refuses past it, credits freed bytes, keeps the peak;
// allocate_buffer charges the thread's current budget until the buffer is freed, and a refused
// charge is a null buffer with nothing taken.
#include "kiln/ir/memory_budget.h"

#include <gtest/gtest.h>

#include <thread>

#include "kiln/ir/buffer.h"

namespace kiln {
namespace {

TEST(MemoryBudget, ChargesUpToTheLimitAndKeepsThePeak) {
  MemoryBudget budget(1000);
  EXPECT_TRUE(budget.charge(600));
  EXPECT_FALSE(budget.charge(401));  // nothing charged
  EXPECT_EQ(budget.in_use(), 600);
  EXPECT_TRUE(budget.charge(400));
  EXPECT_EQ(budget.available(), 0);
  budget.credit(700);
  EXPECT_EQ(budget.in_use(), 300);
  EXPECT_EQ(budget.peak(), 1000);
  EXPECT_FALSE(budget.charge(int64_t{1} << 62));
  EXPECT_NE(budget.describe().find("memory limit 1000 bytes"), std::string::npos) << budget.describe();
}

TEST(MemoryBudget, WithoutALimitUseIsStillCounted) {
  MemoryBudget budget;
  EXPECT_TRUE(budget.charge(int64_t{1} << 40));
  EXPECT_EQ(budget.in_use(), int64_t{1} << 40);
  budget.credit(int64_t{1} << 40);
  EXPECT_EQ(budget.peak(), int64_t{1} << 40);
}

TEST(MemoryBudget, BuffersAreChargedOnTheThreadWhereItIsCurrentUntilFreed) {
  auto budget = std::make_shared<MemoryBudget>(int64_t{8} << 20);
  std::shared_ptr<void> kept;
  {
    const MemoryBudgetScope scope(budget);
    kept = allocate_buffer(1 << 20);
    ASSERT_TRUE(kept);
    EXPECT_EQ(budget->in_use(), 1 << 20);
    std::shared_ptr<void> huge = allocate_buffer(size_t{4} << 20);  // the huge-page path
    ASSERT_TRUE(huge);
    EXPECT_EQ(budget->in_use(), 5 << 20);
    EXPECT_FALSE(allocate_buffer(size_t{4} << 20)) << "past the limit";
    EXPECT_EQ(budget->in_use(), 5 << 20) << "a refused buffer takes nothing";
    std::thread other([&] { EXPECT_TRUE(allocate_buffer(size_t{64} << 20)); });  // no budget there
    other.join();
  }
  EXPECT_EQ(budget->in_use(), 1 << 20) << "freed buffers are credited";
  EXPECT_TRUE(allocate_buffer(size_t{64} << 20)) << "the scope ended";
  kept.reset();
  EXPECT_EQ(budget->in_use(), 0);
  EXPECT_EQ(budget->peak(), 5 << 20);
}

}  // namespace
}  // namespace kiln
