import { render, screen } from '@testing-library/react'
import { version } from 'react'
import { version as domVersion } from 'react-dom'
import { expect, it } from 'vitest'

// Each React project of vitest.config.ts must really run its React, react-dom included.
it('runs against the React of its project [R-REACT-VERSIONS]', () => {
  function Version() {
    return <p>{version.split('.')[0]}</p>
  }
  render(<Version />)
  expect(screen.getByText(/^\d+$/).textContent).toBe(process.env.EXPECTED_REACT)
  expect(domVersion.split('.')[0]).toBe(process.env.EXPECTED_REACT)
})
