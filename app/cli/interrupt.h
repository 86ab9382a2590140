#pragma once
// Ctrl-C while a reply streams stops that reply; the program goes on. A second Ctrl-C before
// the reply has stopped (a long prefill) ends the program the default way.
namespace p64::cli {

void install_interrupt_handler();
// True once Ctrl-C was pressed since the last clear.
bool interrupt_requested();
void clear_interrupt();
// While false (e.g. at the chat prompt), Ctrl-C prints `idle_hint` instead of stopping anything.
void set_generating(bool on, const char* idle_hint = nullptr);

}  // namespace p64::cli
