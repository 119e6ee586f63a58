defmodule MyApp.SchedulerTest do
  use ExUnit.Case, async: false

  setup do
    start_supervised!({MyApp.Scheduler, name: :scheduler, tick: 10})
    :ok
  end

  test "runs due jobs" do
    MyApp.Scheduler.schedule(:scheduler, {:job, self()}, 0)
    assert_receive :job_ran
  end
end
