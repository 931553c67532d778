/*
 * The I/O APIC, only as far as the NMI watchdog needs it: found through the ACPI MADT (else at
 * the standard 0xFEC00000), every input masked at init, one input routed as an edge-triggered
 * NMI to this CPU. The legacy PIC stays masked (kernel/apic.c), so nothing else arrives here.
 */
#ifndef BTSX_KERNEL_IOAPIC_H
#define BTSX_KERNEL_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

/* Finds the I/O APICs and masks every input. False when none answers. */
bool ioapic_init(void);
/* True when some I/O APIC has this global system interrupt (GSI) input. */
bool ioapic_has_gsi(unsigned gsi);
/* Routes the input as an edge-triggered NMI to the APIC ID (physical destination), left
 * masked: ioapic_unmask() lets it through. */
void ioapic_route_nmi(unsigned gsi, uint32_t apic_id);
void ioapic_mask(unsigned gsi);
void ioapic_unmask(unsigned gsi);
/* "madt" or "default" (the standard address, no MADT), for the header. */
const char *ioapic_source(void);

#endif
