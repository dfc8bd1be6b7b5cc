import { createMemoryBus } from '../bus/memory'
import { describeBusSuite } from '../bus/suite'
import { createMemoryStore } from '../store/memory'
import { describeStoreSuite } from '../store/suite'

describeStoreSuite('memory [R-SERVER-STORE]', async () => ({
  store: createMemoryStore(),
  close: async () => {},
}))

// One in-process bus is what every simulated main of a process shares.
describeBusSuite('memory [R-SERVER-BUS]', async (n) => {
  const bus = createMemoryBus()
  return { buses: Array.from({ length: n }, () => bus), close: async () => {} }
})
