export interface UserPickerProps {
  users: readonly string[]
  user: string
  onChange: (user: string) => void
}

/** Who this browser is: the development users of the reference server. */
export function UserPicker({ users, user, onChange }: UserPickerProps) {
  return (
    <label className="user-picker">
      User
      <select value={user} onChange={(event) => onChange(event.target.value)}>
        {users.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  )
}
