defmodule Ci.Property do
  # What StreamData's `property` does: it registers a test of type :property.
  defmacro property(message, do: contents) do
    contents = Macro.escape(contents, unquote: true)

    quote bind_quoted: [message: message, contents: contents] do
      name = ExUnit.Case.register_test(__ENV__, :property, message, [])
      def unquote(name)(_), do: unquote(contents)
    end
  end
end

ExUnit.plural_rule("property", "properties")
ExUnit.start()
